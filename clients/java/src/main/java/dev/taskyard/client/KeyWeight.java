package dev.taskyard.client;

import java.util.Objects;

/**
 * A fairness key's share of its lane: a key of weight 3 is served three tasks for every one of a
 * key of weight 1 while both have tasks waiting.
 *
 * @param key a fairness key ({@link TaskSpec.Builder#fairnessKey})
 * @param weight 1 to 1000; keys without a weight have 1
 */
public record KeyWeight(String key, int weight) {
  public KeyWeight {
    Objects.requireNonNull(key, "key");
  }

  static KeyWeight fromProto(dev.taskyard.v1.KeyWeight w) {
    return new KeyWeight(w.getKey(), w.getWeight());
  }
}
