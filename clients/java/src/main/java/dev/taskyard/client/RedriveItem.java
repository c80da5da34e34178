package dev.taskyard.client;

import java.time.Instant;
import java.util.Optional;

/**
 * What became of one task a redrive matched.
 *
 * @param taskId the task's id
 * @param outcome what the redrive did with it
 * @param failedAttempt the failed attempt it was taken from
 * @param newAttempt the attempt it was given (once re-queued)
 * @param at when it was reached
 * @param detail why it was skipped
 */
public record RedriveItem(
    String taskId, RedriveOutcome outcome, int failedAttempt, int newAttempt, Optional<Instant> at, String detail) {
  static RedriveItem fromProto(dev.taskyard.v1.RedriveItem i) {
    return new RedriveItem(
        i.getTaskId(),
        RedriveOutcome.fromProto(i.getOutcome()),
        i.getFailedAttempt(),
        i.getNewAttempt(),
        Protos.instant(i.hasAt(), i.getAt()),
        i.getDetail());
  }
}
