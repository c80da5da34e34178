package dev.taskyard.client;

/**
 * Why an attempt failed.
 *
 * @param type the exception type, e.g. {@code ValueError} or {@code WorkerProcessDied}
 * @param message the exception's message
 * @param traceback the task's traceback, for people
 * @param attempt the attempt that failed, from 1
 * @param groupId its failure group ({@link Failures}): queue, task name and fingerprint
 * @param redriveId the redrive that re-queued the task from this failure; empty when none did
 */
public record TaskFailure(String type, String message, String traceback, int attempt, String groupId, String redriveId) {
  static TaskFailure fromProto(dev.taskyard.v1.TaskFailure f) {
    return new TaskFailure(
        f.getType(), f.getMessage(), f.getTraceback(), f.getAttempt(), f.getGroupId(), f.getRedriveId());
  }
}
