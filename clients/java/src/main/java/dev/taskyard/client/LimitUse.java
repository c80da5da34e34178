package dev.taskyard.client;

import java.util.Objects;

/**
 * A task's use of one limit ({@link TaskSpec.Builder#limit}): {@code units} units of the limit
 * named {@code limit}, in the bucket {@code key}.
 *
 * @param limit the limit's name; an unknown one is {@code INVALID_ARGUMENT}, reason {@code
 *     UNKNOWN_LIMIT}
 * @param key the bucket of a per-key limit, e.g. {@code customer:42} (at most 256 bytes); a global
 *     limit ignores it
 * @param units the units the task takes; 0 means 1. At most the limit's burst (rate) or its
 *     maximum (concurrency)
 */
public record LimitUse(String limit, String key, long units) {
  public LimitUse {
    Objects.requireNonNull(limit, "limit");
    Objects.requireNonNull(key, "key");
  }

  /** One unit of {@code limit}'s bucket {@code key}. */
  public static LimitUse of(String limit, String key) {
    return new LimitUse(limit, key, 1);
  }

  static LimitUse fromProto(dev.taskyard.v1.LimitUse use) {
    return new LimitUse(use.getLimit(), use.getKey(), use.getUnits());
  }

  dev.taskyard.v1.LimitUse toProto() {
    return dev.taskyard.v1.LimitUse.newBuilder().setLimit(limit).setKey(key).setUnits(units).build();
  }
}
