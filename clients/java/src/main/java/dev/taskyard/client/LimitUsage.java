package dev.taskyard.client;

import java.util.List;

/**
 * What a limit holds back now, on the leading scheduler.
 *
 * @param unitsInUse units held (concurrency) or admitted in the last period (rate), all keys
 * @param admitted attempts admitted since the scheduler's term began
 * @param throttled attempts held back since the scheduler's term began
 * @param waiting queued tasks waiting at this limit now
 * @param keys keys with a bucket now
 * @param busiestKeys the busiest keys, at most 10
 */
public record LimitUsage(
    long unitsInUse, long admitted, long throttled, long waiting, long keys, List<KeyUsage> busiestKeys) {
  public LimitUsage {
    busiestKeys = List.copyOf(busiestKeys);
  }

  static LimitUsage fromProto(dev.taskyard.v1.LimitUsage u) {
    return new LimitUsage(
        u.getUnitsInUse(),
        u.getAdmitted(),
        u.getThrottled(),
        u.getWaiting(),
        u.getKeys(),
        u.getBusiestKeysList().stream()
            .map(k -> new KeyUsage(k.getKey(), k.getUnitsInUse(), k.getWaiting()))
            .toList());
  }
}
