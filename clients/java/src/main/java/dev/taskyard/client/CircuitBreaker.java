package dev.taskyard.client;

import java.time.Duration;
import java.util.Objects;

/**
 * A circuit breaker's numbers, as the gateway stores them ({@link LimitInfo#breaker()}): it opens when
 * {@code failureThreshold} attempts that use it failed within {@code window} (after at least {@code
 * minAttempts} ended there), holds its tasks for {@code coolDown}, then admits {@code halfOpenProbes}
 * attempts at once: a probe's success closes it, a probe's failure opens it again.
 *
 * @param failureThreshold failed attempts within the window that open it, 1 to 1,000,000
 * @param window how far back attempts count; {@link Duration#ZERO} when unset (60 s)
 * @param minAttempts attempts ended within the window before it may open; 0 means {@code failureThreshold}
 * @param coolDown how long it stays open before a probe; {@link Duration#ZERO} when unset (30 s)
 * @param halfOpenProbes attempts admitted at once while half-open; 0 means 1
 */
public record CircuitBreaker(
    long failureThreshold, Duration window, long minAttempts, Duration coolDown, long halfOpenProbes) {
  public CircuitBreaker {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(coolDown, "coolDown");
  }

  static CircuitBreaker fromProto(dev.taskyard.v1.CircuitBreaker b) {
    return new CircuitBreaker(
        b.getFailureThreshold(),
        b.hasWindow() ? Protos.duration(b.getWindow()) : Duration.ZERO,
        b.getMinAttempts(),
        b.hasCoolDown() ? Protos.duration(b.getCoolDown()) : Duration.ZERO,
        b.getHalfOpenProbes());
  }
}
