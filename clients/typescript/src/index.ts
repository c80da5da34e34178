export { TaskyardClient } from "./client.js";
export type { CancelOptions, ListOptions, RunOptions, SubmitOptions, WaitOptions } from "./client.js";
export { TaskyardError } from "./errors.js";
export { Failures, MAX_FILTER_TASK_IDS, MAX_REDRIVE_RATE } from "./failures.js";
export type {
  DeadLetter,
  FailureFilter,
  FailureGroup,
  ListFailuresOptions,
  ListRedrivesOptions,
  Page,
  PurgeOptions,
  Redrive,
  RedriveItem,
  RedriveOptions,
  RedriveOutcome,
  RedriveResult,
  RedriveState,
} from "./failures.js";
export { Limits } from "./limits.js";
export type {
  CircuitBreaker,
  CircuitBreakerInfo,
  ConcurrencyLimit,
  DeleteLimitOptions,
  KeyUsage,
  KeyWeight,
  LimitDefinition,
  LimitInfo,
  LimitPage,
  LimitUsage,
  LimitUse,
  ListLimitsOptions,
  RateLimit,
} from "./limits.js";
export { TENANT_METADATA_KEY, Tenants } from "./tenants.js";
export type { ListTenantsOptions, SuspendTenantOptions, TenantDefinition, TenantInfo, TenantPage, TenantState } from "./tenants.js";
export type { FieldViolation, StatusCodeName } from "./errors.js";
export type { JsonObject, JsonValue } from "./json.js";
export { isLoopback } from "./options.js";
export type { CallOptions, ClientOptions, ConnectionOptions, TlsOptions } from "./options.js";
export { createTaskyardTransport } from "./transport.js";
export type { TaskyardTransport } from "./transport.js";
// The gateway's services, for createClient(Service, transport); their messages and enums
// are at "@taskyard/client/gen/taskyard/v1/<file>_pb".
export { createClient } from "@connectrpc/connect";
export type { Client, Transport } from "@connectrpc/connect";
export { EventService } from "./gen/taskyard/v1/event_service_pb.js";
export { FailureService } from "./gen/taskyard/v1/failure_service_pb.js";
export { LimitService } from "./gen/taskyard/v1/limit_service_pb.js";
export { QueueService } from "./gen/taskyard/v1/queue_service_pb.js";
export { ScheduleService } from "./gen/taskyard/v1/schedule_service_pb.js";
export { TaskService } from "./gen/taskyard/v1/task_service_pb.js";
export { TenantService } from "./gen/taskyard/v1/tenant_service_pb.js";
export { FINAL_STATES } from "./types.js";
export { TaskyardWorker } from "./worker.js";
export type { RegisterOptions, WorkerOptions } from "./worker.js";
export { AttemptAborted, FatalError, RetryAfterError } from "./worker-errors.js";
export type { AbortKind, WorkerErrorOptions } from "./worker-errors.js";
export type { WorkerLogger } from "./worker-stream.js";
export type { TaskContext, TaskFunction } from "./worker-task.js";
export { WorkerService } from "./gen/taskyard/worker/v1/worker_service_pb.js";
export type {
  CancelResult,
  CancelStep,
  DeadLetterReason,
  ListFilter,
  Priority,
  RunResult,
  SubmitResult,
  SubmittedTask,
  TaskFailure,
  TaskInfo,
  TaskOptions,
  TaskPage,
  TaskRequest,
  TaskState,
  WaitResult,
} from "./types.js";
