package dev.taskyard.client;

import java.util.List;
import java.util.Map;

/**
 * gRPC's own retry of UNAVAILABLE (a gateway restarting, a connection refused), as a service
 * config, for the methods a repeat cannot change the outcome of. gRPC resends the same bytes, so
 * a retried submit carries the same request id and is answered with the task of the first one;
 * the other retried methods only read. CancelTask is left out, since a repeat of a cancel that took
 * effect answers TASK_ALREADY_FINAL, and so are the other writes (pausing or clearing a queue,
 * creating or triggering schedules, changing limits or weights).
 */
final class RetryPolicy {
  private RetryPolicy() {}

  /** Service and method of every retried call; the same list in every Taskyard client. */
  static final List<String> RETRIED = List.of(
      "TaskService/SubmitTask",
      "TaskService/BatchSubmitTasks",
      "TaskService/RunTask",
      "TaskService/GetTask",
      "TaskService/WaitTask",
      "TaskService/ListTasks",
      "TaskService/GetTaskTree",
      "TaskService/ExplainTask",
      "TaskService/GetTaskLogs",
      "TaskService/StreamTaskLogs",
      "QueueService/GetQueueStatus",
      "QueueService/ListServers",
      "ScheduleService/GetSchedule",
      "ScheduleService/ListSchedules",
      "LimitService/GetLimit",
      "LimitService/ListLimits",
      "LimitService/ListKeyWeights",
      "FailureService/ListFailureGroups",
      "FailureService/ListFailures",
      "FailureService/GetRedrive",
      "FailureService/ListRedrives",
      "FailureService/ListRedriveItems",
      "TenantService/GetTenant",
      "TenantService/ListTenants");

  static Map<String, Object> serviceConfig() {
    // Numbers are Doubles: the shape gRPC's JSON parser gives, which is what it expects here.
    Map<String, Object> retry = Map.of(
        "maxAttempts", 4.0,
        "initialBackoff", "0.1s",
        "maxBackoff", "2s",
        "backoffMultiplier", 2.0,
        "retryableStatusCodes", List.of("UNAVAILABLE"));
    List<Map<String, Object>> names = RETRIED.stream()
        .map(m -> m.split("/", 2))
        .<Map<String, Object>>map(m -> Map.of("service", "taskyard.v1." + m[0], "method", m[1]))
        .toList();
    return Map.of("methodConfig", List.of(Map.of("name", names, "retryPolicy", retry)));
  }
}
