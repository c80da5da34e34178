package dev.taskyard.client;

import dev.taskyard.v1.Limit;
import java.time.Duration;
import java.util.Objects;

/**
 * A limit's definition, for {@link Limits#create} and {@link Limits#update}. Immutable; made with
 * {@link #rate}, {@link #concurrency} or {@link #breaker}:
 *
 * <pre>{@code
 * LimitSpec stripe = LimitSpec.rate("stripe", 100, Duration.ofSeconds(1)).burst(20).build();
 * LimitSpec perCustomer = LimitSpec.concurrency("per-customer", 3).perKey(true).build();
 * LimitSpec payments = LimitSpec.breaker("payments", 5)
 *     .window(Duration.ofSeconds(30)).coolDown(Duration.ofSeconds(10)).perKey(true).build();
 * }</pre>
 */
public final class LimitSpec {
  private final Limit proto;

  private LimitSpec(Limit proto) {
    this.proto = proto;
  }

  /** At most {@code units} per {@code period} (1 ms to 1 day), in bursts of {@code units} unless {@link Builder#burst}. */
  public static Builder rate(String name, long units, Duration period) {
    Builder b = new Builder(name);
    b.proto.setRate(dev.taskyard.v1.RateLimit.newBuilder().setUnits(units).setPeriod(Protos.duration(period)));
    return b;
  }

  /** At most {@code maxUnits} units held at once by attempts leased to a pool or running. */
  public static Builder concurrency(String name, long maxUnits) {
    Builder b = new Builder(name);
    b.proto.setConcurrency(dev.taskyard.v1.ConcurrencyLimit.newBuilder().setMaxUnits(maxUnits));
    return b;
  }

  /**
   * A circuit breaker: it opens when {@code failureThreshold} (1 to 1,000,000) attempts that use it
   * failed within its window (60 s unless {@link Builder#window}), holds its tasks for its cool-down
   * (30 s unless {@link Builder#coolDown}), then admits its probes ({@link Builder#halfOpenProbes}). With
   * {@link Builder#perKey} each key of a {@link LimitUse}, e.g. a downstream's name, has a breaker of its
   * own.
   */
  public static Builder breaker(String name, long failureThreshold) {
    Builder b = new Builder(name);
    b.proto.setBreaker(dev.taskyard.v1.CircuitBreaker.newBuilder().setFailureThreshold(failureThreshold));
    return b;
  }

  public String name() {
    return proto.getName();
  }

  /** The definition as the wire message, for calls this client does not wrap. */
  public Limit toProto() {
    return proto;
  }

  @Override
  public String toString() {
    return "LimitSpec[" + proto.getName() + "]";
  }

  /** Builds a {@link LimitSpec}; every setter replaces what was set before. */
  public static final class Builder {
    private final Limit.Builder proto = Limit.newBuilder();

    private Builder(String name) {
      proto.setName(Objects.requireNonNull(name, "name"));
    }

    /** A rate limit's burst: units admitted at once after a quiet spell; 0 means its units. */
    public Builder burst(long burst) {
      if (!proto.hasRate()) {
        throw new IllegalStateException("burst is a rate limit's: " + proto.getName() + " is not one");
      }
      proto.getRateBuilder().setBurst(burst);
      return this;
    }

    /** A breaker's window: how far back attempts count, 1 ms to 1 day in whole milliseconds. */
    public Builder window(Duration window) {
      breakerOf("window").setWindow(Protos.duration(Objects.requireNonNull(window, "window")));
      return this;
    }

    /** A breaker's cool-down: how long it stays open before a probe, 1 ms to 1 day in whole milliseconds. */
    public Builder coolDown(Duration coolDown) {
      breakerOf("coolDown").setCoolDown(Protos.duration(Objects.requireNonNull(coolDown, "coolDown")));
      return this;
    }

    /** A breaker's attempts ended within its window before it may open; 0 means its failure threshold. */
    public Builder minAttempts(long minAttempts) {
      breakerOf("minAttempts").setMinAttempts(minAttempts);
      return this;
    }

    /** A breaker's attempts admitted at once while half-open, at most 1000; 0 means 1. */
    public Builder halfOpenProbes(long halfOpenProbes) {
      breakerOf("halfOpenProbes").setHalfOpenProbes(halfOpenProbes);
      return this;
    }

    private dev.taskyard.v1.CircuitBreaker.Builder breakerOf(String setting) {
      if (!proto.hasBreaker()) {
        throw new IllegalStateException(setting + " is a circuit breaker's: " + proto.getName() + " is not one");
      }
      return proto.getBreakerBuilder();
    }

    /** True: each key of a {@link LimitUse} has its own bucket ("at most 3 per customer"). */
    public Builder perKey(boolean perKey) {
      proto.setPerKey(perKey);
      return this;
    }

    /** Free text for people, at most 1024 bytes. */
    public Builder description(String description) {
      proto.setDescription(description);
      return this;
    }

    /**
     * For a limit a task declares: every task of this name uses it, keyed by the value of its
     * keyword argument {@code keyArgument} (empty: one key).
     */
    public Builder declaredBy(String taskName, String keyArgument) {
      proto.setTaskName(taskName).setKeyArgument(keyArgument);
      return this;
    }

    public LimitSpec build() {
      return new LimitSpec(proto.build());
    }
  }
}
