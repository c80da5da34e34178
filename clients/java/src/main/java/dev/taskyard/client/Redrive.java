package dev.taskyard.client;

import java.time.Instant;
import java.util.Optional;

/**
 * A redrive and its progress: its own audit record.
 *
 * @param id its id
 * @param filter the dead letters it matched
 * @param rate tasks a second, at most
 * @param state where it is
 * @param createdBy the name of the token it was asked with ("dev" on a loopback gateway without
 *     tokens)
 * @param createdAt when it was accepted
 * @param updatedAt when it last changed
 * @param finishedAt set once DONE or CANCELLED
 * @param matched tasks matched when it was accepted
 * @param requeued re-queued as a new attempt so far
 * @param skipped no longer a dead letter when their turn came: left as they were
 * @param note the free text given with the request
 */
public record Redrive(
    String id,
    FailureFilter filter,
    double rate,
    RedriveState state,
    String createdBy,
    Optional<Instant> createdAt,
    Optional<Instant> updatedAt,
    Optional<Instant> finishedAt,
    long matched,
    long requeued,
    long skipped,
    String note) {
  static Redrive fromProto(dev.taskyard.v1.Redrive r) {
    return new Redrive(
        r.getId(),
        FailureFilter.fromProto(r.getFilter()),
        r.getRate(),
        RedriveState.fromProto(r.getState()),
        r.getCreatedBy(),
        Protos.instant(r.hasCreatedAt(), r.getCreatedAt()),
        Protos.instant(r.hasUpdatedAt(), r.getUpdatedAt()),
        Protos.instant(r.hasFinishedAt(), r.getFinishedAt()),
        r.getMatched(),
        r.getRequeued(),
        r.getSkipped(),
        r.getNote());
  }
}
