package dev.taskyard.client;

import java.util.List;
import java.util.Map;

/**
 * gRPC's own retry of UNAVAILABLE (a gateway restarting, a connection refused), as a service
 * config. gRPC resends the same bytes, so a retried submit carries the same request id and is
 * answered with the task of the first one; the other retried methods only read, or cancel, which
 * is idempotent. Writes that are not (creating or triggering schedules, clearing a queue) are
 * left out.
 */
final class RetryPolicy {
  private RetryPolicy() {}

  static Map<String, Object> serviceConfig() {
    // Numbers are Doubles: the shape gRPC's JSON parser gives, which is what it expects here.
    Map<String, Object> retry = Map.of(
        "maxAttempts", 4.0,
        "initialBackoff", "0.1s",
        "maxBackoff", "2s",
        "backoffMultiplier", 2.0,
        "retryableStatusCodes", List.of("UNAVAILABLE"));
    List<Map<String, Object>> names = List.of(
        Map.of("service", "taskyard.v1.TaskService"),
        Map.of("service", "taskyard.v1.QueueService", "method", "GetQueueStatus"),
        Map.of("service", "taskyard.v1.QueueService", "method", "ListServers"),
        Map.of("service", "taskyard.v1.ScheduleService", "method", "GetSchedule"),
        Map.of("service", "taskyard.v1.ScheduleService", "method", "ListSchedules"));
    return Map.of("methodConfig", List.of(Map.of("name", names, "retryPolicy", retry)));
  }
}
