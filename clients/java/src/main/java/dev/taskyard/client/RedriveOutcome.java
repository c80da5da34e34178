package dev.taskyard.client;

/** What a redrive did with one task it matched. */
public enum RedriveOutcome {
  /** An outcome this client version does not know (a newer server). */
  UNSPECIFIED,
  /** Not reached yet. */
  PENDING,
  /** Re-queued as a new attempt. */
  REQUEUED,
  /** No longer a dead letter when its turn came: left as it was. */
  SKIPPED,
  /** The redrive was cancelled before reaching it: it stays a dead letter. */
  CANCELLED;

  static RedriveOutcome fromProto(dev.taskyard.v1.RedriveOutcome outcome) {
    return switch (outcome) {
      case REDRIVE_OUTCOME_PENDING -> PENDING;
      case REDRIVE_OUTCOME_REQUEUED -> REQUEUED;
      case REDRIVE_OUTCOME_SKIPPED -> SKIPPED;
      case REDRIVE_OUTCOME_CANCELLED -> CANCELLED;
      default -> UNSPECIFIED;
    };
  }
}
