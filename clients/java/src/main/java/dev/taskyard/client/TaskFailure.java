package dev.taskyard.client;

import java.time.Duration;
import java.util.Objects;

/**
 * Why an attempt failed.
 *
 * @param type the exception type, e.g. {@code ValueError} or {@code WorkerProcessDied}
 * @param message the exception's message
 * @param traceback the task's traceback, for people
 * @param attempt the attempt that failed, from 1
 * @param groupId its failure group ({@link Failures}): queue, task name and fingerprint
 * @param redriveId the redrive that re-queued the task from this failure; empty when none did
 * @param throttled the attempt ended with a throttling answer ({@code RetryAfter}, HTTP 429/503): it
 *     spent no retry
 * @param retryAfter the delay that answer asked for: the next attempt is not due before it; {@link
 *     Duration#ZERO} when none
 * @param refunded charged to the task's retries, then refunded: its circuit breaker counted the
 *     failure as an outage's
 */
public record TaskFailure(
    String type,
    String message,
    String traceback,
    int attempt,
    String groupId,
    String redriveId,
    boolean throttled,
    Duration retryAfter,
    boolean refunded) {
  public TaskFailure {
    Objects.requireNonNull(retryAfter, "retryAfter");
  }

  /** A failure that was neither throttled nor refunded. */
  public TaskFailure(String type, String message, String traceback, int attempt, String groupId, String redriveId) {
    this(type, message, traceback, attempt, groupId, redriveId, false, Duration.ZERO, false);
  }

  static TaskFailure fromProto(dev.taskyard.v1.TaskFailure f) {
    return new TaskFailure(
        f.getType(),
        f.getMessage(),
        f.getTraceback(),
        f.getAttempt(),
        f.getGroupId(),
        f.getRedriveId(),
        f.getThrottled(),
        f.hasRetryAfter() ? Protos.duration(f.getRetryAfter()) : Duration.ZERO,
        f.getRefunded());
  }
}
