/** The client's view of tasks: plain objects with JSON values, Dates and milliseconds. */
import type { JsonObject, JsonValue } from "./json.js";
import type { LimitUse } from "./limits.js";

export type TaskState =
  | "UNSPECIFIED"
  | "PENDING"
  | "QUEUED"
  | "SCHEDULED"
  | "ASSIGNED"
  | "RUNNING"
  | "SUCCESS"
  | "FAILURE"
  | "RETRYING"
  | "CANCELLED";

/** Priority lanes; a CRITICAL task never waits behind lower-priority work not yet started. */
export type Priority = "CRITICAL" | "HIGH" | "NORMAL" | "LOW";

/** How a cancellation took effect: at once, through the task's flag, asyncio, or a worker kill. */
export type CancelStep = "UNSPECIFIED" | "NOT_STARTED" | "FLAG" | "ASYNCIO" | "KILL";

/**
 * Why a task's failure is final (it is a dead letter): its retries are spent, its worker died
 * under it too often, or its error was marked not retryable. UNSPECIFIED: not a dead letter.
 */
export type DeadLetterReason = "UNSPECIFIED" | "RETRIES_EXHAUSTED" | "QUARANTINED" | "NOT_RETRYABLE";

/** SUCCESS, FAILURE and CANCELLED: nothing more will happen to the task by itself. */
export const FINAL_STATES: ReadonlySet<TaskState> = new Set(["SUCCESS", "FAILURE", "CANCELLED"]);

/** What is optional when asking for a task to run; the gateway's defaults apply to the rest. */
export interface TaskOptions {
  /** Default NORMAL. */
  priority?: Priority;
  /** Default "default". */
  queue?: string;
  labels?: Record<string, string>;
  /** Retries after the first attempt; default: the task's declared budget, else the deployment's. */
  maxRetries?: number;
  /** Limit of each attempt; default: the task's declared timeout, else the deployment's. */
  taskTimeoutMs?: number;
  /** Run no earlier than this long after acceptance (state SCHEDULED until then). */
  countdownMs?: number;
  /** Run no earlier than this instant; exclusive with countdownMs. */
  eta?: Date;
  /**
   * A repeat with the same id returns the first submission's task. When absent the client
   * makes a random UUID, so that its own retries cannot run the task twice.
   */
  requestId?: string;
  /** A repeat with the same key within the window returns the first task. */
  idempotencyKey?: string;
  /** Default 24 h, at most 30 days. */
  idempotencyWindowMs?: number;
  /** Ids of tasks that must all succeed first (state PENDING until then). */
  dependsOn?: readonly string[];
  /** The task that submitted this one. */
  parentId?: string;
  /**
   * Flow control: the limits an attempt takes units of when the scheduler admits it (at
   * most 8, each limit once), e.g. `[{ limit: "per-customer", key: "customer:42" }]`.
   */
  limits?: readonly LimitUse[];
  /** The key the task shares its lane by, e.g. a tenant (at most 256 bytes); default none. */
  fairnessKey?: string;
}

/** One task to submit, as `submitBatch` takes it. */
export interface TaskRequest extends TaskOptions {
  name: string;
  args?: readonly JsonValue[];
  kwargs?: JsonObject;
}

/** Why an attempt failed. */
export interface TaskFailure {
  /** Exception type, e.g. "RuntimeError". */
  type: string;
  message: string;
  traceback: string;
  attempt: number;
  failedAt?: Date;
  retryAt?: Date;
  /** Its failure group (`client.failures`): queue, task name and fingerprint. */
  groupId: string;
  /** The redrive that re-queued the task from this failure; "" when none did. */
  redriveId: string;
  /** The attempt ended with a throttling answer (RetryAfter, HTTP 429/503): it spent no retry. */
  throttled: boolean;
  /** The delay that answer asked for: the next attempt is not due before it; undefined when none. */
  retryAfterMs?: number;
  /** Charged to the task's retries, then refunded: its circuit breaker counted it as an outage's. */
  refunded: boolean;
}

/** A task as the gateway stores it. */
export interface TaskInfo {
  id: string;
  name: string;
  args: JsonValue[];
  kwargs: JsonObject;
  state: TaskState;
  /** SUCCESS, FAILURE or CANCELLED. */
  isFinal: boolean;
  priority: Priority;
  queue: string;
  labels: Record<string, string>;
  /** -1: the task's declared budget, else the deployment default. */
  maxRetries: number;
  /** Undefined: the task's declared timeout, else the deployment default. */
  taskTimeoutMs?: number;
  attempt: number;
  /** The return value once SUCCESS; null before. */
  result: JsonValue;
  /** The last failed attempt's failure, if any. */
  failure?: TaskFailure;
  /** Every failed attempt, oldest first (`get` fills it; lists leave it empty). */
  failures: TaskFailure[];
  requestId: string;
  idempotencyKey: string;
  parentId: string;
  rootId: string;
  dependsOn: string[];
  workerId: string;
  cancelRequested: boolean;
  cancelReason: string;
  cancelStep: CancelStep;
  scheduleId: string;
  /** As submitted, with the limits its task name declares. */
  limits: Required<LimitUse>[];
  fairnessKey: string;
  /** The tenant it belongs to: the submitting token's ("" is the default tenant). */
  tenant: string;
  /** Set while it is a dead letter (FAILURE for good); UNSPECIFIED otherwise. */
  deadLetterReason: DeadLetterReason;
  /** The redrive that re-queued it last ("" when none), and the failed attempt it took it from. */
  redriveId: string;
  redrivenFromAttempt: number;
  /** What the task code set with ctx.set_context (progress among it). */
  context: JsonObject;
  createdAt?: Date;
  startedAt?: Date;
  finishedAt?: Date;
  updatedAt?: Date;
  /** When a SCHEDULED or RETRYING task becomes due. */
  runAt?: Date;
  /** Payload fields the gateway left out of this view, each with why. */
  omitted: Record<string, string>;
}

export interface SubmitResult {
  task: TaskInfo;
  /** False when the request id (or idempotency key) matched an earlier submission. */
  created: boolean;
}

/** One outcome of a batch, in request order. */
export interface SubmittedTask {
  id: string;
  state: TaskState;
  created: boolean;
}

export interface RunResult {
  task: TaskInfo;
  /** False when the request id (or idempotency key) matched an earlier submission. */
  created: boolean;
  /** True when the wait ended before the task was final: not an error. */
  timedOut: boolean;
}

export interface WaitResult {
  task: TaskInfo;
  /** True when the wait ended before the task was final: not an error. */
  timedOut: boolean;
}

export interface TaskPage {
  /** Newest first. */
  tasks: TaskInfo[];
  /** "" on the last page. */
  nextPageToken: string;
}

export interface CancelResult {
  task: TaskInfo;
  /**
   * True when the task is CANCELLED; false while only the cancel flag of a task already handed
   * to a pool (ASSIGNED or RUNNING) is set: its pool never starts a body whose cancel came first.
   */
  cancelled: boolean;
  step: CancelStep;
  /** Unfinished children cancelled with it. */
  cancelledChildren: string[];
}

/** The filter of `list` and `tasks`. */
export interface ListFilter {
  /** Any of these states; default all. */
  states?: readonly TaskState[];
  name?: string;
  queue?: string;
  priority?: Priority;
  /** 1..1000; default 100. */
  pageSize?: number;
}
