package dev.taskyard.client;

/** Priority lanes, strictly ordered: a CRITICAL task never waits behind lower work that has not started. */
public enum Priority {
  /** Not set; the server treats it as NORMAL. */
  UNSPECIFIED,
  CRITICAL,
  HIGH,
  NORMAL,
  LOW;

  static Priority fromProto(dev.taskyard.v1.Priority priority) {
    return switch (priority) {
      case PRIORITY_CRITICAL -> CRITICAL;
      case PRIORITY_HIGH -> HIGH;
      case PRIORITY_NORMAL -> NORMAL;
      case PRIORITY_LOW -> LOW;
      default -> UNSPECIFIED;
    };
  }

  dev.taskyard.v1.Priority toProto() {
    return dev.taskyard.v1.Priority.valueOf("PRIORITY_" + name());
  }
}
