package dev.taskyard.client;

/** Why a task's failure is final: it is a dead letter ({@link Failures}). */
public enum DeadLetterReason {
  /** Not a dead letter, or a reason this client version does not know (a newer server). */
  UNSPECIFIED,
  /** Its retry budget is spent. */
  RETRIES_EXHAUSTED,
  /** Its worker died under it as many times as the deployment allows. */
  QUARANTINED,
  /** It failed with an error marked not retryable. */
  NOT_RETRYABLE;

  static DeadLetterReason fromProto(dev.taskyard.v1.DeadLetterReason reason) {
    return switch (reason) {
      case DEAD_LETTER_REASON_RETRIES_EXHAUSTED -> RETRIES_EXHAUSTED;
      case DEAD_LETTER_REASON_QUARANTINED -> QUARANTINED;
      case DEAD_LETTER_REASON_NOT_RETRYABLE -> NOT_RETRYABLE;
      default -> UNSPECIFIED;
    };
  }

  dev.taskyard.v1.DeadLetterReason toProto() {
    return this == UNSPECIFIED
        ? dev.taskyard.v1.DeadLetterReason.DEAD_LETTER_REASON_UNSPECIFIED
        : dev.taskyard.v1.DeadLetterReason.valueOf("DEAD_LETTER_REASON_" + name());
  }
}
