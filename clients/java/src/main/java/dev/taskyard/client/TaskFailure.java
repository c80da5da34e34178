package dev.taskyard.client;

/**
 * Why an attempt failed.
 *
 * @param type the exception type, e.g. {@code ValueError} or {@code WorkerProcessDied}
 * @param message the exception's message
 * @param traceback the task's traceback, for people
 * @param attempt the attempt that failed, from 1
 */
public record TaskFailure(String type, String message, String traceback, int attempt) {
  static TaskFailure fromProto(dev.taskyard.v1.TaskFailure f) {
    return new TaskFailure(f.getType(), f.getMessage(), f.getTraceback(), f.getAttempt());
  }
}
