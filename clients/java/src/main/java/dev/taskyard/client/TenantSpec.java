package dev.taskyard.client;

import dev.taskyard.v1.Tenant;
import dev.taskyard.v1.TenantQuota;
import java.util.Objects;

/**
 * What {@link Tenants#create} and {@link Tenants#update} send: a tenant's name, its quota, its
 * weight in fair share and its description. An update replaces the quota, the weight and the
 * description: what is left out is reset.
 *
 * <pre>{@code
 * client.tenants().create(TenantSpec.builder("acme").maxConcurrency(50)
 *     .rate(new RateLimit(100, Duration.ofSeconds(1), 0)).weight(2).build());
 * }</pre>
 *
 * @param name 1 to 64 characters of [a-z0-9-]
 * @param maxConcurrency attempts of its tasks running at once; 0: no bound
 * @param rate attempts of its tasks started per period; null: no bound
 * @param weight its share in fair share against the other tenants, 1 to 1000; 0 means 1
 * @param description at most 1,024 characters
 */
public record TenantSpec(String name, long maxConcurrency, RateLimit rate, int weight, String description) {
  public TenantSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
  }

  /** A builder of the tenant named {@code name}, without quota, of weight 1. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  Tenant toProto() {
    TenantQuota.Builder quota = TenantQuota.newBuilder().setMaxConcurrency(maxConcurrency);
    if (rate != null) {
      quota.setRate(dev.taskyard.v1.RateLimit.newBuilder()
          .setUnits(rate.units())
          .setPeriod(Protos.duration(rate.period()))
          .setBurst(rate.burst()));
    }
    return Tenant.newBuilder()
        .setName(name)
        .setQuota(quota)
        .setWeight(weight)
        .setDescription(description)
        .build();
  }

  /** Builds a {@link TenantSpec}. */
  public static final class Builder {
    private final String name;
    private long maxConcurrency;
    private RateLimit rate;
    private int weight;
    private String description = "";

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    public Builder maxConcurrency(long maxConcurrency) {
      this.maxConcurrency = maxConcurrency;
      return this;
    }

    public Builder rate(RateLimit rate) {
      this.rate = rate;
      return this;
    }

    public Builder weight(int weight) {
      this.weight = weight;
      return this;
    }

    public Builder description(String description) {
      this.description = Objects.requireNonNull(description, "description");
      return this;
    }

    public TenantSpec build() {
      return new TenantSpec(name, maxConcurrency, rate, weight, description);
    }
  }
}
