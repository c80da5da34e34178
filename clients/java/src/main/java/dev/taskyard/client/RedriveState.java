package dev.taskyard.client;

/** Where a redrive is: RUNNING, PAUSED, then DONE or CANCELLED (final). */
public enum RedriveState {
  /** A state this client version does not know (a newer server). */
  UNSPECIFIED,
  RUNNING,
  PAUSED,
  /** Every matched task was re-queued or skipped. */
  DONE,
  /** Cancelled: the tasks it had not re-queued stay dead letters. */
  CANCELLED;

  /** True for DONE and CANCELLED. */
  public boolean isFinal() {
    return this == DONE || this == CANCELLED;
  }

  static RedriveState fromProto(dev.taskyard.v1.RedriveState state) {
    return switch (state) {
      case REDRIVE_STATE_RUNNING -> RUNNING;
      case REDRIVE_STATE_PAUSED -> PAUSED;
      case REDRIVE_STATE_DONE -> DONE;
      case REDRIVE_STATE_CANCELLED -> CANCELLED;
      default -> UNSPECIFIED;
    };
  }
}
