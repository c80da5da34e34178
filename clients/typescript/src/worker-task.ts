/** One leased attempt as a worker runs it: the body's TaskContext, its logs, its outcome. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import type { TaskyardClient, SubmitOptions } from "./client.js";
import { fromListValue, type JsonObject, type JsonValue } from "./json.js";
import {
  AttemptRefSchema,
  LogLineSchema,
  type Attempt,
  type AttemptRef,
  type Failure,
  type LogLine,
  type WorkRequestSchema,
} from "./gen/taskyard/worker/v1/worker_service_pb.js";
import { AttemptAborted, failureOf, resultOf, valueOf, type AbortKind } from "./worker-errors.js";
import { inAttemptSpan } from "./worker-trace.js";

/** What a registered function gets: the attempt, its stop signal, logging, progress and children. */
export interface TaskContext {
  readonly id: string;
  readonly name: string;
  /** 1 for the first run; a retry has the next number. */
  readonly attempt: number;
  readonly args: JsonValue[];
  readonly kwargs: JsonObject;
  readonly labels: Readonly<Record<string, string>>;
  /** The task that submitted this one ("" for none). */
  readonly parentId: string;
  /** The first task of its tree (its own id for a task without parent). */
  readonly rootId: string;
  readonly queue: string;
  /** The task's tenant ("" for none). */
  readonly tenant: string;
  /** The retries the task may still spend after this attempt fails. */
  readonly retriesLeft: number;
  /** When the attempt times out (the signal aborts then); undefined: no timeout. */
  readonly deadline: Date | undefined;
  /**
   * Aborts when the body should stop; its `reason` is an {@link AttemptAborted} whose
   * `kind` says why (cancel, revoke, deadline, disconnect). Pass it on to what the body
   * awaits (fetch, timers/promises, child processes).
   */
  readonly signal: AbortSignal;
  /** One line of the task's log (StreamTaskLogs), e.g. `log("info", "fetched 10 rows")`. */
  log(level: string, message: string): void;
  /** Progress from 0 to 1: GetTask's context shows it under "progress", and it is logged. */
  progress(fraction: number, message?: string): void;
  /** Submits a task with this one as its parent (through the worker's client); resolves to its id. */
  submitChild(name: string, args?: readonly JsonValue[], options?: SubmitOptions): Promise<string>;
}

/** A registered task body: returns a JSON value (undefined is null), or throws to fail. */
export type TaskFunction = (task: TaskContext) => unknown;

/** One message a worker sends, as its oneof case and value. */
export type WorkMessage = NonNullable<MessageInitShape<typeof WorkRequestSchema>["message"]>;

/** What an attempt needs from its stream. */
export interface AttemptDeps {
  /** Queues one message on the stream; false once the stream is gone. */
  send(message: WorkMessage): boolean;
  client: TaskyardClient;
  maxMessageBytes: number;
  maxResultBytes: number;
}

/** Log lines are sent at least this often, and at once when this many are waiting. */
const LOG_FLUSH_MS = 100;
const LOG_FLUSH_LINES = 100;
/** setTimeout's limit: a deadline further away than this is no deadline in practice. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}... (${text.length - limit} more characters)` : text;
}

export function attemptKey(ref: { taskId: string; attempt: number; leaseToken: string }): string {
  return `${ref.taskId}#${ref.attempt}#${ref.leaseToken}`;
}

export class AttemptRun {
  readonly attempt: Attempt;
  readonly ref: AttemptRef;
  readonly key: string;
  readonly #fn: TaskFunction;
  readonly #deps: AttemptDeps;
  readonly #stop = new AbortController();
  #cancelled = false;
  /** Revoked or abandoned: its logs and progress no longer count, only its (late) outcome is sent. */
  #gone = false;
  #done = false;
  #lines: LogLine[] = [];
  #lineBytes = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  #deadlineTimer: NodeJS.Timeout | undefined;

  constructor(attempt: Attempt, fn: TaskFunction, deps: AttemptDeps) {
    this.attempt = attempt;
    this.ref = create(AttemptRefSchema, { taskId: attempt.taskId, attempt: attempt.attempt, leaseToken: attempt.leaseToken });
    this.key = attemptKey(this.ref);
    this.#fn = fn;
    this.#deps = deps;
  }

  /** The task was cancelled: the body is told, and its outcome is reported as cancelled. */
  cancel(reason: string): void {
    if (this.#done) return;
    this.#cancelled = true;
    this.#abort("cancel", reason || "the task was cancelled");
  }

  /** The lease is gone: the body is told; only its outcome is still sent (the gateway refuses it). */
  revoke(reason: string): void {
    this.#gone = true;
    this.#abort("revoke", reason || "the attempt's lease was revoked");
  }

  /** The stream broke: the body is told, and nothing of it is sent any more. */
  abandon(): void {
    this.#gone = true;
    this.#abort("disconnect", "the stream to the gateway broke; the task runs again elsewhere");
  }

  /** Sends Started, runs the body, and sends its Outcome (late ones included). */
  async run(): Promise<void> {
    this.#deps.send({ case: "started", value: { ref: this.ref } });
    const deadline = this.attempt.deadline ? timestampMs(this.attempt.deadline) - Date.now() : undefined;
    if (deadline !== undefined && deadline <= MAX_TIMER_MS) {
      this.#deadlineTimer = setTimeout(() => this.#abort("deadline", "the attempt's timeout passed"), Math.max(0, deadline));
    }
    const outcome = await inAttemptSpan(this.attempt, () => this.#call(), (o) =>
      "failure" in o ? `${o.failure.type}: ${o.failure.message}` : undefined,
    );
    this.#done = true;
    clearTimeout(this.#deadlineTimer);
    this.#flush();
    const value =
      "failure" in outcome
        ? { case: "failure" as const, value: outcome.failure }
        : { case: "result" as const, value: valueOf(outcome.result) };
    this.#deps.send({ case: "outcome", value: { ref: this.ref, outcome: value, cancelled: this.#cancelled } });
  }

  async #call(): Promise<{ result: JsonValue } | { failure: Failure }> {
    try {
      return resultOf(await this.#fn(this.#context()), this.#deps.maxResultBytes);
    } catch (err) {
      const failure = failureOf(err);
      const reason: unknown = this.#stop.signal.reason;
      if (err === reason && reason instanceof AttemptAborted && reason.kind === "deadline") failure.type = "TimeoutError";
      // A message over the stream's limit would end the stream, not fail the attempt.
      failure.message = clip(failure.message, this.#textLimit());
      failure.traceback = clip(failure.traceback, this.#textLimit());
      return { failure };
    }
  }

  /** The longest text kept in a log line or failure: a quarter of a message at most, in UTF-8's worst case. */
  #textLimit(): number {
    return Math.max(256, Math.min(16_384, Math.floor(this.#deps.maxMessageBytes / 16)));
  }

  #abort(kind: AbortKind, message: string): void {
    if (!this.#stop.signal.aborted) this.#stop.abort(new AttemptAborted(kind, message));
  }

  #context(): TaskContext {
    const a = this.attempt;
    return Object.freeze({
      id: a.taskId,
      name: a.name,
      attempt: a.attempt,
      args: fromListValue(a.args),
      kwargs: (a.kwargs ?? {}) as JsonObject,
      labels: Object.freeze({ ...a.labels }),
      parentId: a.parentId,
      rootId: a.rootId || a.taskId,
      queue: a.queue,
      tenant: a.tenant,
      retriesLeft: a.retriesLeft,
      deadline: a.deadline ? new Date(timestampMs(a.deadline)) : undefined,
      signal: this.#stop.signal,
      log: (level: string, message: string) => this.#log(level, message),
      progress: (fraction: number, message = "") => this.#progress(fraction, message),
      submitChild: async (name: string, args: readonly JsonValue[] = [], options: SubmitOptions = {}) => {
        const { task } = await this.#deps.client.submit(name, args, { ...options, parentId: a.taskId });
        return task.id;
      },
    });
  }

  #log(level: string, message: string): void {
    if (this.#done || this.#gone) return;
    const text = clip(String(message), this.#textLimit());
    const line = create(LogLineSchema, {
      time: timestampFromMs(Date.now()),
      level: String(level).trim().toLowerCase() || "info",
      message: text,
    });
    this.#lines.push(line);
    this.#lineBytes += Buffer.byteLength(text) + 64;
    if (this.#lines.length >= LOG_FLUSH_LINES || this.#lineBytes >= this.#deps.maxMessageBytes / 2) {
      this.#flush();
    } else {
      this.#flushTimer ??= setTimeout(() => this.#flush(), LOG_FLUSH_MS);
    }
  }

  #progress(fraction: number, message: string): void {
    if (typeof fraction !== "number" || !(fraction >= 0 && fraction <= 1)) {
      throw new RangeError(`progress is a fraction between 0 and 1, got ${String(fraction)}`);
    }
    if (this.#done || this.#gone) return;
    this.#flush(); // the lines logged before it come before it
    this.#deps.send({ case: "progress", value: { ref: this.ref, fraction, message: String(message) } });
  }

  #flush(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#lines.length === 0) return;
    const lines = this.#lines;
    this.#lines = [];
    this.#lineBytes = 0;
    if (!this.#gone) this.#deps.send({ case: "logs", value: { ref: this.ref, lines } });
  }
}
