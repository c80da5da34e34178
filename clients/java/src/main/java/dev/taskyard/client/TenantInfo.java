package dev.taskyard.client;

import dev.taskyard.v1.Tenant;
import java.time.Instant;
import java.util.Optional;

/**
 * A tenant as the gateway stores it.
 *
 * @param name its name
 * @param state ACTIVE or SUSPENDED
 * @param maxConcurrency attempts of its tasks running at once; 0: no bound
 * @param rate attempts of its tasks started per period; empty: no bound
 * @param weight its share in fair share against the other tenants (0 means 1)
 * @param description free text
 * @param createdAt when it was created
 * @param updatedAt when it last changed
 * @param suspendedAt set while suspended
 */
public record TenantInfo(
    String name,
    State state,
    long maxConcurrency,
    Optional<RateLimit> rate,
    int weight,
    String description,
    Optional<Instant> createdAt,
    Optional<Instant> updatedAt,
    Optional<Instant> suspendedAt) {

  /** {@code taskyard.v1.TenantState}. */
  public enum State {
    UNSPECIFIED,
    /** Its tasks are dispatched and its submissions taken. */
    ACTIVE,
    /** Its submissions are refused (TENANT_SUSPENDED) and its tasks wait, queued. */
    SUSPENDED;

    static State fromProto(dev.taskyard.v1.TenantState s) {
      return switch (s) {
        case TENANT_STATE_ACTIVE -> ACTIVE;
        case TENANT_STATE_SUSPENDED -> SUSPENDED;
        default -> UNSPECIFIED;
      };
    }
  }

  static TenantInfo fromProto(Tenant t) {
    Optional<RateLimit> rate = t.getQuota().hasRate()
        ? Optional.of(new RateLimit(
            t.getQuota().getRate().getUnits(),
            Protos.duration(t.getQuota().getRate().getPeriod()),
            t.getQuota().getRate().getBurst()))
        : Optional.empty();
    return new TenantInfo(
        t.getName(),
        State.fromProto(t.getState()),
        t.getQuota().getMaxConcurrency(),
        rate,
        t.getWeight(),
        t.getDescription(),
        Protos.instant(t.hasCreatedAt(), t.getCreatedAt()),
        Protos.instant(t.hasUpdatedAt(), t.getUpdatedAt()),
        Protos.instant(t.hasSuspendedAt(), t.getSuspendedAt()));
  }
}
