package dev.taskyard.client;

/**
 * One key's part of a {@link LimitUsage}.
 *
 * @param key the key
 * @param unitsInUse units it holds (concurrency) or was admitted in the last period (rate)
 * @param waiting queued tasks of this key waiting at the limit
 */
public record KeyUsage(String key, long unitsInUse, long waiting) {}
