package dev.taskyard.client;

/** Where a task is in its life. {@link #SUCCESS}, {@link #FAILURE} and {@link #CANCELLED} are final. */
public enum TaskState {
  /** A state this client version does not know (a newer server). */
  UNSPECIFIED,
  /** Accepted, waiting on its dependencies. */
  PENDING,
  /** Ready to run, waiting in its priority lane. */
  QUEUED,
  /** Waiting for its ETA or countdown. */
  SCHEDULED,
  /** Leased to a worker pool, not started yet. */
  ASSIGNED,
  /** A worker is running the current attempt. */
  RUNNING,
  SUCCESS,
  /** Failed with its retries spent. */
  FAILURE,
  /** Failed, waiting for its backoff before the next attempt. */
  RETRYING,
  CANCELLED;

  /** True for SUCCESS, FAILURE and CANCELLED: the task will not change by itself any more. */
  public boolean isFinal() {
    return this == SUCCESS || this == FAILURE || this == CANCELLED;
  }

  static TaskState fromProto(dev.taskyard.v1.TaskState state) {
    return switch (state) {
      case TASK_STATE_PENDING -> PENDING;
      case TASK_STATE_QUEUED -> QUEUED;
      case TASK_STATE_SCHEDULED -> SCHEDULED;
      case TASK_STATE_ASSIGNED -> ASSIGNED;
      case TASK_STATE_RUNNING -> RUNNING;
      case TASK_STATE_SUCCESS -> SUCCESS;
      case TASK_STATE_FAILURE -> FAILURE;
      case TASK_STATE_RETRYING -> RETRYING;
      case TASK_STATE_CANCELLED -> CANCELLED;
      default -> UNSPECIFIED;
    };
  }

  dev.taskyard.v1.TaskState toProto() {
    return this == UNSPECIFIED
        ? dev.taskyard.v1.TaskState.TASK_STATE_UNSPECIFIED
        : dev.taskyard.v1.TaskState.valueOf("TASK_STATE_" + name());
  }
}
