package dev.taskyard.client;

import java.util.Map;
import java.util.Optional;

/**
 * A task whose failure is final.
 *
 * @param taskId the task's id
 * @param queue its queue
 * @param name its task name
 * @param reason why its failure is final
 * @param groupId its failure group
 * @param failure its final failure
 * @param labels its labels
 * @param redrives times it was redriven before and failed again
 */
public record DeadLetter(
    String taskId,
    String queue,
    String name,
    DeadLetterReason reason,
    String groupId,
    Optional<TaskFailure> failure,
    Map<String, String> labels,
    int redrives) {
  public DeadLetter {
    labels = Map.copyOf(labels);
  }

  static DeadLetter fromProto(dev.taskyard.v1.DeadLetter d) {
    return new DeadLetter(
        d.getTaskId(),
        d.getQueue(),
        d.getName(),
        DeadLetterReason.fromProto(d.getReason()),
        d.getGroupId(),
        d.hasFailure() ? Optional.of(TaskFailure.fromProto(d.getFailure())) : Optional.empty(),
        d.getLabelsMap(),
        d.getRedrives());
  }
}
