/**
 * TaskyardWorker: runs task bodies written in TypeScript for a Taskyard suite, over the
 * public worker protocol (taskyard.worker.v1.WorkerService, docs/worker-protocol.md).
 * To the scheduler it is a pool: priorities, fair share and limits apply to it unchanged.
 */
import { hostname } from "node:os";
import { Code, createClient } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { TaskyardClient } from "./client.js";
import { checkMs, durationFromMs } from "./convert.js";
import { TaskyardError, type StatusCodeName } from "./errors.js";
import { WorkerService, type TaskDeclarationSchema, type Welcome } from "./gen/taskyard/worker/v1/worker_service_pb.js";
import type { ClientOptions } from "./options.js";
import { WorkStream, type WorkerLogger } from "./worker-stream.js";
import type { TaskFunction } from "./worker-task.js";
import { SDK_VERSION } from "./worker-trace.js";

export interface WorkerOptions extends ClientOptions {
  /** How many attempts run at once, 1..256; default 4. */
  slots?: number;
  /** Shown in `taskyard queue servers` and the dashboard; default "typescript@<host>-<pid>". */
  name?: string;
  /** Where reconnects (warn) and refused reports (debug) are told; default warnings on stderr. */
  logger?: Partial<WorkerLogger>;
  /** How long a new stream waits for the gateway's Welcome before it is opened again; default 30 000 ms. */
  welcomeTimeoutMs?: number;
}

/** What `@task(...)` declares in Python: defaults for every task of the name. */
export interface RegisterOptions {
  /** The default timeout of its attempts (a submission's own wins); default none. */
  timeoutMs?: number;
  /** The retry budget when a submission gives none; default the suite's. */
  maxRetries?: number;
  /** A rate limit every task of this name takes, e.g. "100/s"; default none. */
  rateLimit?: string;
  /** How many tasks of this name run at once across the suite; default no limit. */
  concurrency?: number;
  /** The keyword argument whose value keys the declared limits (one limit per key). */
  limitKey?: string;
}

const NAME = /^[A-Za-z0-9._:-]{1,200}$/;
const MAX_SLOTS = 256;
const MAX_FUNCTIONS = 1000;
/** Errors a new stream would only meet again: run() ends with them. */
const FINAL_CODES: ReadonlySet<StatusCodeName> = new Set([
  "UNAUTHENTICATED",
  "PERMISSION_DENIED",
  "INVALID_ARGUMENT",
  "UNIMPLEMENTED",
]);
/** Reconnects back off exponentially between these, with jitter. */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const DEFAULT_WELCOME_TIMEOUT_MS = 30_000;

type Declaration = MessageInitShape<typeof TaskDeclarationSchema>;

function checkCount(value: number | undefined, what: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${what} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * ```ts
 * const worker = new TaskyardWorker("localhost:50051", { tls: false, token, slots: 8 });
 * worker.register("add", (task) => (task.args[0] as number) + (task.args[1] as number));
 * worker.handleSignals(); // SIGTERM, SIGINT: drain, then run() resolves
 * await worker.run();
 * ```
 */
export class TaskyardWorker {
  readonly target: string;
  /** The client children are submitted through (the worker's connection, token and TLS). */
  readonly client: TaskyardClient;
  readonly slots: number;
  readonly name: string;
  readonly #logger: WorkerLogger;
  readonly #welcomeTimeoutMs: number;
  readonly #functions = new Map<string, TaskFunction>();
  readonly #declarations: Declaration[] = [];
  readonly #readyHooks: ((workerId: string) => void)[] = [];
  readonly #stopping = new AbortController();
  readonly #unhook: (() => void)[] = [];
  #stream: WorkStream | undefined;
  #running: Promise<void> | undefined;
  #workerId: string | undefined;

  /**
   * @param target `host:port` of the gateway.
   * @param options as for {@link TaskyardClient} (`tls`, `token` with the `work` scope, ...),
   *   and `slots`, `name`, `logger`.
   */
  constructor(target: string, options: WorkerOptions = {}) {
    this.target = target;
    this.slots = checkCount(options.slots ?? 4, "slots", 1, MAX_SLOTS) as number;
    this.name = options.name || `typescript@${hostname()}-${process.pid}`;
    this.#logger = {
      debug: options.logger?.debug?.bind(options.logger) ?? (() => {}),
      warn: options.logger?.warn?.bind(options.logger) ?? ((message) => console.warn(message)),
    };
    this.#welcomeTimeoutMs = checkMs(options.welcomeTimeoutMs ?? DEFAULT_WELCOME_TIMEOUT_MS, "welcomeTimeoutMs");
    if (this.#welcomeTimeoutMs === 0) throw new RangeError("welcomeTimeoutMs must be more than 0");
    this.client = new TaskyardClient(target, options);
  }

  /** The id the suite knows the current stream by (GetTask.worker_id); undefined before the first Welcome. */
  get workerId(): string | undefined {
    return this.#workerId;
  }

  /**
   * Runs `fn` for every attempt of tasks named `name`. Its return value is the task's
   * result (JSON); a throw fails the attempt: retried unless a {@link FatalError}, after
   * `delayMs` for a {@link RetryAfterError}. Before run() only.
   */
  register(name: string, fn: TaskFunction, options: RegisterOptions = {}): this {
    if (this.#running) throw new Error("register functions before run()");
    if (typeof name !== "string" || !NAME.test(name)) {
      throw new TypeError(`a task name is 1 to 200 letters, digits or ._:- characters, got ${JSON.stringify(name)}`);
    }
    if (typeof fn !== "function") throw new TypeError(`${name}: the task body must be a function`);
    if (this.#functions.has(name)) throw new Error(`${name} is registered already`);
    if (this.#functions.size >= MAX_FUNCTIONS) throw new RangeError(`a worker runs at most ${MAX_FUNCTIONS} functions`);
    if (options.timeoutMs !== undefined && checkMs(options.timeoutMs, "timeoutMs") === 0) {
      throw new RangeError(`${name}: timeoutMs must be more than 0 (leave it out for none)`);
    }
    this.#declarations.push({
      name,
      timeout: options.timeoutMs === undefined ? undefined : durationFromMs(options.timeoutMs, "timeoutMs"),
      maxRetries: checkCount(options.maxRetries, "maxRetries", 0, 2 ** 31 - 1),
      rateLimit: options.rateLimit ?? "",
      concurrency: checkCount(options.concurrency, "concurrency", 0, 2 ** 31 - 1) ?? 0,
      limitKey: options.limitKey ?? "",
    });
    this.#functions.set(name, fn);
    return this;
  }

  /** Called with the worker id each time the gateway welcomes the worker (again after a reconnect). */
  onReady(hook: (workerId: string) => void): this {
    this.#readyHooks.push(hook);
    return this;
  }

  /**
   * Connects and runs attempts until {@link stop} (or a handled signal) has drained the
   * worker; a broken stream is opened again, backing off from 0.1 s to 5 s. Rejects with
   * a {@link TaskyardError} the gateway ends the stream with that a retry would meet again
   * (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT, UNIMPLEMENTED). Once per worker:
   * the worker's connection is closed when it returns.
   */
  run(): Promise<void> {
    if (this.#running) return Promise.reject(new Error("run() was called already"));
    if (this.#functions.size === 0) return Promise.reject(new TypeError("register at least one function before run()"));
    this.#running = this.#loop();
    return this.#running;
  }

  /**
   * Drains: no new attempts, the running ones finish and report, then the stream ends.
   * Resolves when run() has returned.
   */
  async stop(): Promise<void> {
    if (!this.#stopping.signal.aborted) {
      this.#stopping.abort();
      this.#stream?.drain();
    }
    await this.#running?.catch(() => {});
  }

  /**
   * Drains on these signals (default SIGTERM and SIGINT); a second one does what the
   * signal does by default. Returns a function that removes the handlers (run() does when it ends).
   */
  handleSignals(signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"]): () => void {
    const remove = (): void => {
      for (const signal of signals) process.off(signal, onSignal);
    };
    const onSignal = (signal: NodeJS.Signals): void => {
      if (this.#stopping.signal.aborted) {
        remove();
        process.kill(process.pid, signal);
        return;
      }
      void this.stop();
    };
    for (const signal of signals) process.on(signal, onSignal);
    this.#unhook.push(remove);
    return remove;
  }

  async #loop(): Promise<void> {
    const rpc = createClient(WorkerService, this.client.transport);
    const hello = {
      workerName: this.name,
      slots: this.slots,
      tasks: this.#declarations,
      sdk: `typescript/${SDK_VERSION}`,
    };
    let failures = 0;
    try {
      while (!this.#stopping.signal.aborted) {
        const stream = new WorkStream({
          rpc,
          hello,
          functions: this.#functions,
          slots: this.slots,
          client: this.client,
          logger: this.#logger,
          welcomeTimeoutMs: this.#welcomeTimeoutMs,
          onWelcome: (welcome) => this.#welcomed(welcome),
        });
        this.#stream = stream;
        let error: TaskyardError;
        try {
          await stream.run();
          if (stream.drained || this.#stopping.signal.aborted) return;
          error = new TaskyardError(Code.Unavailable, "the gateway ended the stream");
        } catch (err) {
          error = TaskyardError.from(err);
          if (FINAL_CODES.has(error.code) || this.#stopping.signal.aborted) throw error;
        } finally {
          this.#stream = undefined;
        }
        failures = stream.welcomed ? 1 : failures + 1;
        const base = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (failures - 1));
        const delay = Math.round(base / 2 + (Math.random() * base) / 2);
        this.#logger.warn(`taskyard worker: ${error.message}; connecting again in ${delay} ms`);
        await sleep(delay, this.#stopping.signal);
      }
    } finally {
      for (const unhook of this.#unhook.splice(0)) unhook();
      await this.client.close();
    }
  }

  #welcomed(welcome: Welcome): void {
    this.#workerId = welcome.workerId;
    for (const hook of this.#readyHooks) {
      try {
        hook(welcome.workerId);
      } catch (err) {
        this.#logger.warn(`taskyard worker: an onReady hook threw: ${String(err)}`);
      }
    }
  }
}
