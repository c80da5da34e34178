package dev.taskyard.client;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The dead letters of one queue, task name and failure fingerprint (exception type, message with
 * numbers, ids and quoted values masked, and the innermost frame of the task's own code).
 *
 * @param groupId stable for a queue, name and fingerprint: use it in {@link FailureFilter#group}
 * @param queue the queue
 * @param name the task name
 * @param type the exception type
 * @param message the masked message
 * @param frame the innermost frame of the task's own code ("module.function"); empty without a
 *     traceback
 * @param count dead-lettered tasks in the group now
 * @param firstSeen the oldest final failure among them
 * @param lastSeen the newest final failure among them
 * @param sampleTaskIds up to 5 ids, newest first
 * @param sampleTraceback the newest one's traceback
 */
public record FailureGroup(
    String groupId,
    String queue,
    String name,
    String type,
    String message,
    String frame,
    long count,
    Optional<Instant> firstSeen,
    Optional<Instant> lastSeen,
    List<String> sampleTaskIds,
    String sampleTraceback) {
  public FailureGroup {
    sampleTaskIds = List.copyOf(sampleTaskIds);
  }

  static FailureGroup fromProto(dev.taskyard.v1.FailureGroup g) {
    return new FailureGroup(
        g.getGroupId(),
        g.getQueue(),
        g.getName(),
        g.getType(),
        g.getMessage(),
        g.getFrame(),
        g.getCount(),
        Protos.instant(g.hasFirstSeen(), g.getFirstSeen()),
        Protos.instant(g.hasLastSeen(), g.getLastSeen()),
        g.getSampleTaskIdsList(),
        g.getSampleTraceback());
  }
}
