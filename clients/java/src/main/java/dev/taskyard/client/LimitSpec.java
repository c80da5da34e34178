package dev.taskyard.client;

import dev.taskyard.v1.Limit;
import java.time.Duration;
import java.util.Objects;

/**
 * A limit's definition, for {@link Limits#create} and {@link Limits#update}. Immutable; made with
 * {@link #rate} or {@link #concurrency}:
 *
 * <pre>{@code
 * LimitSpec stripe = LimitSpec.rate("stripe", 100, Duration.ofSeconds(1)).burst(20).build();
 * LimitSpec perCustomer = LimitSpec.concurrency("per-customer", 3).perKey(true).build();
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
        throw new IllegalStateException("burst is a rate limit's: " + proto.getName() + " is a concurrency limit");
      }
      proto.getRateBuilder().setBurst(burst);
      return this;
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
