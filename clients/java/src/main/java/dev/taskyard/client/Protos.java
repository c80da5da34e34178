package dev.taskyard.client;

import com.google.protobuf.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** java.time to and from the protobuf well-known types. */
final class Protos {
  private Protos() {}

  static com.google.protobuf.Duration duration(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException("a duration must not be negative: " + d);
    }
    return com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  static Duration duration(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }

  static Optional<Instant> instant(boolean present, Timestamp t) {
    return present ? Optional.of(Instant.ofEpochSecond(t.getSeconds(), t.getNanos())) : Optional.empty();
  }
}
