package dev.taskyard.client;

/**
 * At most {@code maxUnits} units held by attempts leased to a pool or running.
 *
 * @param maxUnits at least 1
 */
public record ConcurrencyLimit(long maxUnits) {}
