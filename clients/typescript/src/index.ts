export { TaskyardClient } from "./client.js";
export type { CancelOptions, ListOptions, SubmitOptions, WaitOptions } from "./client.js";
export { TaskyardError } from "./errors.js";
export type { FieldViolation, StatusCodeName } from "./errors.js";
export type { JsonObject, JsonValue } from "./json.js";
export { isLoopback } from "./options.js";
export type { CallOptions, ClientOptions, TlsOptions } from "./options.js";
export { FINAL_STATES } from "./types.js";
export type {
  CancelResult,
  CancelStep,
  ListFilter,
  Priority,
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
