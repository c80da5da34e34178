package dev.taskyard.client;

import java.util.List;
import java.util.Optional;

/**
 * The answer to {@link Failures#redrive}.
 *
 * @param redrive the redrive accepted; empty for a dry run
 * @param matched dead letters the filter matches (at most 100,000 in one redrive)
 * @param sample up to 10 of them, newest failure first
 */
public record RedriveResult(Optional<Redrive> redrive, long matched, List<DeadLetter> sample) {
  public RedriveResult {
    sample = List.copyOf(sample);
  }
}
