/**
 * What a task body throws to say how its attempt failed, what its AbortSignal's reason
 * says when it is stopped, and how an outcome becomes the protocol's Outcome.
 */
import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import { durationFromMs } from "./convert.js";
import { checkJson } from "./json.js";
import { FailureSchema, type Failure } from "./gen/taskyard/worker/v1/worker_service_pb.js";

export interface WorkerErrorOptions {
  /** The failure's type as the task's record shows it; default the error's `name`. */
  type?: string;
  cause?: unknown;
}

/** Fails the attempt for good: no retry, whatever budget the task has left. */
export class FatalError extends Error {
  override name = "FatalError";

  constructor(message: string, options: WorkerErrorOptions = {}) {
    super(message, { cause: options.cause });
    if (options.type) this.name = options.type;
  }
}

/** Fails the attempt and asks for the next one after `delayMs` instead of the suite's backoff. */
export class RetryAfterError extends Error {
  override name = "RetryAfterError";
  readonly delayMs: number;

  constructor(delayMs: number, message: string, options: WorkerErrorOptions = {}) {
    super(message, { cause: options.cause });
    durationFromMs(delayMs, "delayMs"); // checks it now, not when the outcome is sent
    this.delayMs = delayMs;
    if (options.type) this.name = options.type;
  }
}

/**
 * Why an attempt's body was told to stop:
 * - `cancel`: its task was cancelled; stop soon, the outcome is reported as cancelled;
 * - `revoke`: its lease is gone (a cancel not honoured in time); nothing it reports counts;
 * - `deadline`: its timeout passed; the gateway already failed it with TimeoutError;
 * - `disconnect`: the stream to the gateway broke; the suite runs the task again elsewhere;
 */
export type AbortKind = "cancel" | "revoke" | "deadline" | "disconnect";

/** The reason of a task's AbortSignal: `kind` says why it stopped. */
export class AttemptAborted extends Error {
  override readonly name = "AttemptAborted";
  readonly kind: AbortKind;

  constructor(kind: AbortKind, message: string) {
    super(message || `the attempt was stopped (${kind})`);
    this.kind = kind;
  }
}

/** Beyond this a result is not sent: the attempt fails with ResultTooLarge (not retried). */
export const DEFAULT_MAX_RESULT_BYTES = 1024 * 1024;

/** The JSON value of a body's return value, or the failure it amounts to. */
export function resultOf(value: unknown, maxBytes: number): { result: JsonValue } | { failure: Failure } {
  const json = value === undefined ? null : value;
  try {
    checkJson(json, "result");
  } catch (err) {
    // Another run may return something else: retried, as the Python pool does.
    return { failure: failureOf(err, true) };
  }
  const bytes = Buffer.byteLength(JSON.stringify(json));
  if (bytes > maxBytes) {
    const message = `result is ${bytes} bytes of JSON, over the limit of ${maxBytes}`;
    return { failure: create(FailureSchema, { type: "ResultTooLarge", message, retryable: false }) };
  }
  return { result: json as JsonValue };
}

export function valueOf(json: JsonValue): Value {
  return fromJson(ValueSchema, json);
}

/** A thrown value as the protocol's Failure: retryable unless a FatalError (or `retryable` says no). */
export function failureOf(err: unknown, retryable = !(err instanceof FatalError)): Failure {
  if (!(err instanceof Error)) {
    return create(FailureSchema, { type: "Error", message: String(err), retryable });
  }
  const type = err.name && err.name !== "Error" ? err.name : err.constructor?.name || "Error";
  return create(FailureSchema, {
    type,
    message: err.message,
    traceback: err.stack ?? "",
    retryable,
    retryDelay: err instanceof RetryAfterError ? durationFromMs(err.delayMs, "delayMs") : undefined,
  });
}
