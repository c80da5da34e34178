package dev.taskyard.client;

import dev.taskyard.v1.Limit;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A limit as the gateway stores it, with the leading scheduler's live view of it when {@link
 * Limits#get} or {@link Limits#list} got one. Exactly one of {@link #rate()}, {@link
 * #concurrency()} and {@link #breaker()} is present.
 */
public final class LimitInfo {
  private final Limit proto;

  private LimitInfo(Limit proto) {
    this.proto = proto;
  }

  /** Wraps a limit message (for the generated stubs' replies). */
  public static LimitInfo fromProto(Limit limit) {
    return new LimitInfo(Objects.requireNonNull(limit, "limit"));
  }

  /** The full message, with every field the server sent. */
  public Limit proto() {
    return proto;
  }

  public String name() {
    return proto.getName();
  }

  public Optional<RateLimit> rate() {
    if (!proto.hasRate()) {
      return Optional.empty();
    }
    dev.taskyard.v1.RateLimit r = proto.getRate();
    return Optional.of(new RateLimit(r.getUnits(), Protos.duration(r.getPeriod()), r.getBurst()));
  }

  public Optional<ConcurrencyLimit> concurrency() {
    return proto.hasConcurrency()
        ? Optional.of(new ConcurrencyLimit(proto.getConcurrency().getMaxUnits()))
        : Optional.empty();
  }

  /** A circuit breaker's numbers, when it is one. */
  public Optional<CircuitBreaker> breaker() {
    return proto.hasBreaker() ? Optional.of(CircuitBreaker.fromProto(proto.getBreaker())) : Optional.empty();
  }

  /** True: each key has its own bucket; false: one bucket for all. */
  public boolean perKey() {
    return proto.getPerKey();
  }

  public String description() {
    return proto.getDescription();
  }

  /** The task that declares this limit; empty for one made through {@link Limits#create}. */
  public String taskName() {
    return proto.getTaskName();
  }

  /** The keyword argument a declared limit is keyed by; empty when none. */
  public String keyArgument() {
    return proto.getKeyArgument();
  }

  public Optional<Instant> createdAt() {
    return Protos.instant(proto.hasCreatedAt(), proto.getCreatedAt());
  }

  public Optional<Instant> updatedAt() {
    return Protos.instant(proto.hasUpdatedAt(), proto.getUpdatedAt());
  }

  /** The leading scheduler's live view; empty when no scheduler answered. */
  public Optional<LimitUsage> usage() {
    return proto.hasUsage() ? Optional.of(LimitUsage.fromProto(proto.getUsage())) : Optional.empty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LimitInfo other && proto.equals(other.proto);
  }

  @Override
  public int hashCode() {
    return proto.hashCode();
  }

  @Override
  public String toString() {
    return "LimitInfo[name=" + name() + "]";
  }
}
