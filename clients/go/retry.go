package taskyard

// serviceConfig retries UNAVAILABLE (the gateway restarting, a connection
// lost before the call was read) a few times with backoff, for the methods a
// repeat cannot change the outcome of: reads, and submits, whose request id
// makes a repeat return the first task (gRPC resends the same request bytes).
// CancelTask is not among them: a repeat of a cancel that took effect would
// answer TASK_ALREADY_FINAL. Nor are the other writes (pausing, clearing,
// purging, schedules, limits and weights, redrives and their controls), whose repeat is not known to be
// harmless.
const serviceConfig = `{
  "methodConfig": [{
    "name": [
      {"service": "taskyard.v1.TaskService", "method": "SubmitTask"},
      {"service": "taskyard.v1.TaskService", "method": "BatchSubmitTasks"},
      {"service": "taskyard.v1.TaskService", "method": "RunTask"},
      {"service": "taskyard.v1.TaskService", "method": "GetTask"},
      {"service": "taskyard.v1.TaskService", "method": "WaitTask"},
      {"service": "taskyard.v1.TaskService", "method": "ListTasks"},
      {"service": "taskyard.v1.TaskService", "method": "GetTaskTree"},
      {"service": "taskyard.v1.TaskService", "method": "ExplainTask"},
      {"service": "taskyard.v1.TaskService", "method": "GetTaskLogs"},
      {"service": "taskyard.v1.TaskService", "method": "StreamTaskLogs"},
      {"service": "taskyard.v1.QueueService", "method": "GetQueueStatus"},
      {"service": "taskyard.v1.QueueService", "method": "ListServers"},
      {"service": "taskyard.v1.ScheduleService", "method": "GetSchedule"},
      {"service": "taskyard.v1.ScheduleService", "method": "ListSchedules"},
      {"service": "taskyard.v1.LimitService", "method": "GetLimit"},
      {"service": "taskyard.v1.LimitService", "method": "ListLimits"},
      {"service": "taskyard.v1.LimitService", "method": "ListKeyWeights"},
      {"service": "taskyard.v1.FailureService", "method": "ListFailureGroups"},
      {"service": "taskyard.v1.FailureService", "method": "ListFailures"},
      {"service": "taskyard.v1.FailureService", "method": "GetRedrive"},
      {"service": "taskyard.v1.FailureService", "method": "ListRedrives"},
      {"service": "taskyard.v1.FailureService", "method": "ListRedriveItems"},
      {"service": "taskyard.v1.TenantService", "method": "GetTenant"},
      {"service": "taskyard.v1.TenantService", "method": "ListTenants"}
    ],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.2s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
}`
