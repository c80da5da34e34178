package dev.taskyard.client;

import java.time.Duration;
import java.util.Objects;

/**
 * At most {@code units} per {@code period}, in bursts of up to {@code burst} units.
 *
 * @param units units per period, at least 1
 * @param period 1 ms to 1 day, in whole milliseconds
 * @param burst units admitted at once after a quiet spell; 0 means {@code units}
 */
public record RateLimit(long units, Duration period, long burst) {
  public RateLimit {
    Objects.requireNonNull(period, "period");
  }
}
