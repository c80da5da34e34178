/** Between the wire messages and the client's plain objects. */
import { create } from "@bufbuild/protobuf";
import { DurationSchema, durationMs, timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Duration, Timestamp } from "@bufbuild/protobuf/wkt";
import { randomUUID } from "node:crypto";
import {
  CancelStep as PbCancelStep,
  DeadLetterReason as PbDeadLetterReason,
  Priority as PbPriority,
  TaskSpecSchema,
  TaskState as PbTaskState,
  type Task,
  type TaskFailure as PbTaskFailure,
  type TaskSpec,
} from "./gen/taskyard/v1/task_pb.js";
import { fromListValue, fromValue, toListValue, toStruct } from "./json.js";
import { fromLimitUses, toLimitUses } from "./limits.js";
import {
  FINAL_STATES,
  type CancelStep,
  type DeadLetterReason,
  type Priority,
  type TaskFailure,
  type TaskInfo,
  type TaskRequest,
  type TaskState,
} from "./types.js";

/** A count of milliseconds, checked: JavaScript callers are not held to the type. */
export function checkMs(ms: number, what: string): number {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`${what} must be a finite number of milliseconds >= 0, got ${String(ms)}`);
  }
  return ms;
}

/** Milliseconds as a Duration, rounded to whole nanoseconds (a fraction there is not valid protobuf). */
export function durationFromMs(ms: number, what: string): Duration {
  checkMs(ms, what);
  let seconds = Math.floor(ms / 1000);
  let nanos = Math.round((ms - seconds * 1000) * 1e6);
  if (nanos >= 1e9) {
    seconds += 1;
    nanos -= 1e9;
  }
  return create(DurationSchema, { seconds: BigInt(seconds), nanos });
}

export function stateName(state: PbTaskState): TaskState {
  return (PbTaskState[state] as TaskState | undefined) ?? "UNSPECIFIED";
}

export function stateValue(state: TaskState): PbTaskState {
  const value = (PbTaskState as unknown as Record<string, PbTaskState | undefined>)[state];
  if (value === undefined) throw new TypeError(`unknown task state ${JSON.stringify(state)}`);
  return value;
}

export function priorityValue(priority: Priority): PbPriority {
  // Checked at run time too: JavaScript callers are not held to the type.
  const value = (PbPriority as unknown as Record<string, PbPriority | undefined>)[priority];
  if (value === undefined || value === PbPriority.UNSPECIFIED) {
    throw new TypeError(`priority must be CRITICAL, HIGH, NORMAL or LOW, got ${JSON.stringify(priority)}`);
  }
  return value;
}

export function cancelStepName(step: PbCancelStep): CancelStep {
  return (PbCancelStep[step] as CancelStep | undefined) ?? "UNSPECIFIED";
}

export function deadLetterReasonName(reason: PbDeadLetterReason): DeadLetterReason {
  return (PbDeadLetterReason[reason] as DeadLetterReason | undefined) ?? "UNSPECIFIED";
}

export function deadLetterReasonValue(reason: DeadLetterReason): PbDeadLetterReason {
  // Checked at run time too: JavaScript callers are not held to the type.
  const value = (PbDeadLetterReason as unknown as Record<string, PbDeadLetterReason | undefined>)[reason];
  if (value === undefined) throw new TypeError(`unknown dead letter reason ${JSON.stringify(reason)}`);
  return value;
}

/** The wire spec of one request; `path` prefixes the names in client-side errors. */
export function toSpec(req: TaskRequest, path: string): TaskSpec {
  if (req.eta !== undefined && req.countdownMs !== undefined) {
    throw new TypeError(`${path}: eta and countdownMs are exclusive`);
  }
  return create(TaskSpecSchema, {
    name: req.name,
    args: toListValue(req.args ?? [], `${path}.args`),
    kwargs: toStruct(req.kwargs ?? {}, `${path}.kwargs`),
    priority: req.priority === undefined ? PbPriority.UNSPECIFIED : priorityValue(req.priority),
    queue: req.queue ?? "",
    labels: { ...req.labels },
    maxRetries: req.maxRetries,
    timeout: req.taskTimeoutMs === undefined ? undefined : durationFromMs(req.taskTimeoutMs, `${path}.taskTimeoutMs`),
    countdown: req.countdownMs === undefined ? undefined : durationFromMs(req.countdownMs, `${path}.countdownMs`),
    eta: req.eta === undefined ? undefined : timestampFromDate(req.eta),
    requestId: req.requestId || randomUUID(),
    idempotencyKey: req.idempotencyKey ?? "",
    idempotencyWindow:
      req.idempotencyWindowMs === undefined
        ? undefined
        : durationFromMs(req.idempotencyWindowMs, `${path}.idempotencyWindowMs`),
    dependsOn: [...(req.dependsOn ?? [])],
    parentId: req.parentId ?? "",
    limits: toLimitUses(req.limits, `${path}.limits`),
    fairnessKey: req.fairnessKey ?? "",
  });
}

function date(ts: Timestamp | undefined): Date | undefined {
  return ts ? timestampDate(ts) : undefined;
}

export function toFailure(f: PbTaskFailure): TaskFailure {
  return {
    type: f.type,
    message: f.message,
    traceback: f.traceback,
    attempt: f.attempt,
    failedAt: date(f.failedAt),
    retryAt: date(f.retryAt),
    groupId: f.groupId,
    redriveId: f.redriveId,
    throttled: f.throttled,
    retryAfterMs: f.retryAfter ? durationMs(f.retryAfter) : undefined,
    refunded: f.refunded,
  };
}

export function toTaskInfo(t: Task | undefined): TaskInfo {
  if (!t) throw new TypeError("the gateway answered without a task");
  const state = stateName(t.state);
  return {
    id: t.id,
    name: t.name,
    args: fromListValue(t.args),
    kwargs: t.kwargs ?? {},
    state,
    isFinal: FINAL_STATES.has(state),
    priority: t.priority === PbPriority.UNSPECIFIED ? "NORMAL" : (PbPriority[t.priority] as Priority),
    queue: t.queue,
    labels: { ...t.labels },
    maxRetries: t.maxRetries,
    taskTimeoutMs: t.timeout ? durationMs(t.timeout) : undefined,
    attempt: t.attempt,
    result: fromValue(t.result),
    failure: t.failure ? toFailure(t.failure) : undefined,
    failures: t.failures.map(toFailure),
    requestId: t.requestId,
    idempotencyKey: t.idempotencyKey,
    parentId: t.parentId,
    rootId: t.rootId,
    dependsOn: [...t.dependsOn],
    workerId: t.workerId,
    cancelRequested: t.cancelRequested,
    cancelReason: t.cancelReason,
    cancelStep: cancelStepName(t.cancelStep),
    scheduleId: t.scheduleId,
    limits: fromLimitUses(t.limits),
    fairnessKey: t.fairnessKey,
    tenant: t.tenant,
    deadLetterReason: deadLetterReasonName(t.deadLetterReason),
    redriveId: t.redriveId,
    redrivenFromAttempt: t.redrivenFromAttempt,
    context: t.context ?? {},
    createdAt: date(t.createdAt),
    startedAt: date(t.startedAt),
    finishedAt: date(t.finishedAt),
    updatedAt: date(t.updatedAt),
    runAt: date(t.runAt),
    omitted: { ...t.omitted },
  };
}
