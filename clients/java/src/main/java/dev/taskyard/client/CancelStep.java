package dev.taskyard.client;

/** Which step of a cancellation stopped a task; a running task is stopped in escalating steps. */
public enum CancelStep {
  /** Not stopped (yet), or a step this client version does not know. */
  UNSPECIFIED,
  /** Its body never started: cancelled before any pool held it, or by its pool before it began. */
  NOT_STARTED,
  /** The task saw its cancel flag and stopped itself. */
  FLAG,
  /** asyncio cancellation (or the end of a sync task's thread) stopped it. */
  ASYNCIO,
  /** It did not stop in time: its worker process was killed. */
  KILL;

  static CancelStep fromProto(dev.taskyard.v1.CancelStep step) {
    return switch (step) {
      case CANCEL_STEP_NOT_STARTED -> NOT_STARTED;
      case CANCEL_STEP_FLAG -> FLAG;
      case CANCEL_STEP_ASYNCIO -> ASYNCIO;
      case CANCEL_STEP_KILL -> KILL;
      default -> UNSPECIFIED;
    };
  }
}
