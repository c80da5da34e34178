/** TaskyardClient: submit, inspect and cancel tasks through a Taskyard gateway. */
import { Code, ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { FailureService } from "./gen/taskyard/v1/failure_service_pb.js";
import { LimitService } from "./gen/taskyard/v1/limit_service_pb.js";
import { TenantService } from "./gen/taskyard/v1/tenant_service_pb.js";
import { TaskService } from "./gen/taskyard/v1/task_service_pb.js";
import {
  cancelStepName,
  checkMs,
  durationFromMs,
  priorityValue,
  stateName,
  stateValue,
  toSpec,
  toTaskInfo,
} from "./convert.js";
import { TaskyardError } from "./errors.js";
import type { JsonValue } from "./json.js";
import { Failures } from "./failures.js";
import { Limits } from "./limits.js";
import { Tenants } from "./tenants.js";
import { DEFAULT_TIMEOUT_MS, type CallOptions, type ClientOptions } from "./options.js";
import { createTaskyardTransport, type TaskyardTransport } from "./transport.js";
import type {
  CancelResult,
  ListFilter,
  RunResult,
  SubmitResult,
  SubmittedTask,
  TaskInfo,
  TaskOptions,
  TaskPage,
  TaskRequest,
  WaitResult,
} from "./types.js";

export interface SubmitOptions extends TaskOptions, CallOptions {
  /** Keyword arguments of the task, a JSON object. */
  kwargs?: TaskRequest["kwargs"];
}

export interface WaitOptions extends CallOptions {
  /** How long to wait for the task to be final; default 30 000 ms. Longer waits are split. */
  waitMs?: number;
}

export interface RunOptions extends SubmitOptions {
  /**
   * How long to wait for the task to be final; default 30 000 ms. The gateway waits up to
   * 300 000 ms in the one call; a longer wait goes on as `wait` does.
   */
  waitMs?: number;
}

export interface ListOptions extends ListFilter, CallOptions {
  /** A previous page's nextPageToken. */
  pageToken?: string;
}

export interface CancelOptions extends CallOptions {
  reason?: string;
  /** For a running task: how long to wait for it to stop. Default: return once flagged. */
  waitMs?: number;
}

/** The gateway caps one WaitTask at 300 s. */
const MAX_WAIT_CHUNK_MS = 300_000;
/** Room above a server-side wait for the answer to arrive before the call's deadline. */
const WAIT_SLACK_MS = 10_000;
/**
 * The gateway answers a wait about 100 ms before the call's deadline, and at once when
 * less is left: closer than this, asking again would only spin until the deadline.
 */
const DEADLINE_MARGIN_MS = 150;

export class TaskyardClient {
  readonly target: string;
  /**
   * The Connect transport the client's calls go through: the one given in the options,
   * or the one it made. `createClient(QueueService, client.transport)` calls another
   * Taskyard service over the same connection, TLS, token and default deadline.
   */
  readonly transport: Transport;
  /** Named limits and fairness weights: `client.limits.create(...)`, `.get`, `.list`, ... */
  readonly limits: Limits;
  /** Dead letters, their groups, redrives and purge: `client.failures.groups()`, `.redrive(...)`, ... */
  readonly failures: Failures;
  /** Tenants, for operator tokens: `client.tenants.create(...)`, `.suspend(...)`, ... */
  readonly tenants: Tenants;
  readonly #rpc: Client<typeof TaskService>;
  /** The transport the client made, and so closes; undefined for one given in the options. */
  readonly #own: TaskyardTransport | undefined;
  readonly #closing = new AbortController();
  readonly #timeoutMs: number;

  /**
   * @param target `host:port` of the gateway.
   * @param options TLS (system roots by default; `tls: false` for a loopback dev gateway),
   *   `token`, default per-call `timeoutMs`, or a `transport` to use as it is.
   */
  constructor(target: string, options: ClientOptions = {}) {
    this.target = target;
    this.#timeoutMs = checkMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs");
    this.#own = options.transport ? undefined : createTaskyardTransport(target, options);
    this.transport = options.transport ?? (this.#own as TaskyardTransport);
    this.#rpc = createClient(TaskService, this.transport);
    this.limits = new Limits(createClient(LimitService, this.transport), (options, fn) => this.#call(options, fn));
    this.failures = new Failures(createClient(FailureService, this.transport), (options, fn) => this.#call(options, fn));
    this.tenants = new Tenants(createClient(TenantService, this.transport), (options, fn) => this.#call(options, fn));
  }

  /**
   * Submits `name(...args, **kwargs)`. Without `requestId` the client makes a random
   * UUID, so that resending after a lost answer returns the same task.
   */
  async submit(name: string, args: readonly JsonValue[] = [], options: SubmitOptions = {}): Promise<SubmitResult> {
    const task = toSpec({ ...options, name, args }, "task");
    const res = await this.#call(options, (call) => this.#rpc.submitTask({ task }, call));
    return { task: toTaskInfo(res.task), created: res.created };
  }

  /**
   * Submits `name(...args, **kwargs)` and waits for its final state, in one call (RunTask).
   * A wait that runs out is not an error: `timedOut` is true and `task` is as it was then
   * (the task goes on: `wait(task.id)` later). Exactly-once per `requestId`, as `submit`:
   * a repeat waits on the first submission's task (`created` false).
   */
  async run(name: string, args: readonly JsonValue[] = [], options: RunOptions = {}): Promise<RunResult> {
    const task = toSpec({ ...options, name, args }, "task");
    const started = Date.now();
    const waitMs = checkMs(options.waitMs ?? 30_000, "waitMs");
    const chunk = Math.min(waitMs, MAX_WAIT_CHUNK_MS);
    const given = options.timeoutMs === undefined ? undefined : checkMs(options.timeoutMs, "timeoutMs");
    const timeoutMs = given ?? Math.max(this.#timeoutMs, chunk + WAIT_SLACK_MS);
    const res = await this.#call({ signal: options.signal, timeoutMs }, (call) =>
      this.#rpc.runTask({ task, timeout: durationFromMs(chunk, "waitMs") }, call),
    );
    const info = toTaskInfo(res.task);
    const rest = waitMs - (Date.now() - started);
    if (res.final || info.isFinal || rest <= 0) {
      return { task: info, created: res.created, timedOut: !res.final && !info.isFinal };
    }
    // Longer than one call, or ended early (the call's deadline, a gateway stopping): the
    // rest as `wait` waits, within what is left of the call's deadline.
    const left = given === undefined || given <= 0 ? given : Math.max(1, given - (Date.now() - started));
    const waited = await this.wait(info.id, { waitMs: rest, signal: options.signal, timeoutMs: left });
    return { task: waited.task, created: res.created, timedOut: waited.timedOut };
  }

  /** Submits up to 1,000 tasks in one call: all accepted or none. Outcomes come in request order. */
  async submitBatch(requests: readonly TaskRequest[], options: CallOptions = {}): Promise<SubmittedTask[]> {
    const tasks = requests.map((r, i) => toSpec(r, `tasks[${i}]`));
    const res = await this.#call(options, (call) => this.#rpc.batchSubmitTasks({ tasks }, call));
    return res.tasks.map((t) => ({ id: t.id, state: stateName(t.state), created: t.created }));
  }

  async get(id: string, options: CallOptions = {}): Promise<TaskInfo> {
    const res = await this.#call(options, (call) => this.#rpc.getTask({ id }, call));
    return toTaskInfo(res.task);
  }

  /**
   * Resolves once the task is final or `waitMs` has passed. A wait that runs out is not
   * an error: `timedOut` is true and `task` is as it was then.
   */
  async wait(id: string, options: WaitOptions = {}): Promise<WaitResult> {
    this.#open();
    const waitUntil = Date.now() + checkMs(options.waitMs ?? 30_000, "waitMs");
    const given = options.timeoutMs === undefined ? undefined : checkMs(options.timeoutMs, "timeoutMs");
    const callUntil = given !== undefined && given > 0 ? Date.now() + given : undefined;
    for (;;) {
      const chunk = Math.max(0, Math.min(waitUntil - Date.now(), MAX_WAIT_CHUNK_MS));
      let timeoutMs = given === undefined ? Math.max(this.#timeoutMs, chunk + WAIT_SLACK_MS) : 0;
      if (callUntil !== undefined) {
        timeoutMs = callUntil - Date.now();
        // Connect reads a timeout of 0 or less as none at all.
        if (timeoutMs <= 0) throw new TaskyardError(Code.DeadlineExceeded, "the operation timed out");
      }
      const res = await this.#call({ signal: options.signal, timeoutMs }, (call) =>
        this.#rpc.waitTask({ id, timeout: durationFromMs(chunk, "waitMs") }, call),
      );
      const task = toTaskInfo(res.task);
      // The gateway may end a wait early (its 300 s cap, or short of the call's deadline):
      // asking again keeps the caller's wait, and a deadline that passes stays an error.
      if (!res.timedOut || task.isFinal || Date.now() >= waitUntil) {
        return { task, timedOut: res.timedOut && !task.isFinal };
      }
      if (callUntil !== undefined && callUntil - Date.now() < DEADLINE_MARGIN_MS) {
        throw new TaskyardError(Code.DeadlineExceeded, "the operation timed out");
      }
    }
  }

  /** One page of tasks, newest first. */
  async list(options: ListOptions = {}): Promise<TaskPage> {
    const res = await this.#call(options, (call) =>
      this.#rpc.listTasks(
        {
          states: (options.states ?? []).map(stateValue),
          name: options.name ?? "",
          queue: options.queue ?? "",
          priority: options.priority === undefined ? undefined : priorityValue(options.priority),
          pageSize: options.pageSize ?? 0,
          pageToken: options.pageToken ?? "",
        },
        call,
      ),
    );
    return { tasks: res.tasks.map(toTaskInfo), nextPageToken: res.nextPageToken };
  }

  /** Every task matching the filter, page after page as the loop asks for them. */
  async *tasks(options: Omit<ListOptions, "pageToken"> = {}): AsyncGenerator<TaskInfo, void, undefined> {
    let pageToken = "";
    do {
      const page = await this.list({ ...options, pageToken });
      yield* page.tasks;
      // A page pointing back at itself would loop for ever.
      if (page.nextPageToken && page.nextPageToken === pageToken) {
        throw new Error(`the gateway answered page token ${JSON.stringify(pageToken)} with itself`);
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /**
   * Cancels a task. One no pool holds is CANCELLED at once; one already handed to a pool
   * (ASSIGNED or RUNNING) gets the cancel flag: its pool never starts a body whose cancel came
   * first, and stops a running one in steps. With `waitMs` the call waits that long for it to stop.
   */
  async cancel(id: string, options: CancelOptions = {}): Promise<CancelResult> {
    const wait = options.waitMs === undefined ? undefined : durationFromMs(options.waitMs, "waitMs");
    const timeoutMs = options.timeoutMs ?? Math.max(this.#timeoutMs, (options.waitMs ?? 0) + WAIT_SLACK_MS);
    const res = await this.#call({ signal: options.signal, timeoutMs }, (call) =>
      this.#rpc.cancelTask({ id, reason: options.reason ?? "", wait }, call),
    );
    return {
      task: toTaskInfo(res.task),
      cancelled: res.cancelled,
      step: cancelStepName(res.step),
      cancelledChildren: [...res.cancelledChildren],
    };
  }

  /**
   * Closes the connection (one given in the options stays open: it is the caller's to
   * close); calls still running, and any later call, fail with CANCELLED. The connection
   * ends gracefully (GOAWAY with NO_ERROR); the promise resolves once it is closed.
   */
  close(): Promise<void> {
    this.#closing.abort(new ConnectError("the client is closed", Code.Canceled));
    return this.#own?.close() ?? Promise.resolve();
  }

  #open(): void {
    if (this.#closing.signal.aborted) throw new TaskyardError(Code.Canceled, "the client is closed");
  }

  async #call<T>(options: CallOptions, fn: (call: CallOptions) => Promise<T>): Promise<T> {
    this.#open();
    // Connect writes grpc-timeout from this as it is: a fraction of a millisecond would
    // make the header invalid.
    const timeoutMs = Math.ceil(checkMs(options.timeoutMs ?? this.#timeoutMs, "timeoutMs"));
    // A call ends with the client: close() cancels the calls still running.
    const call = new AbortController();
    const given = options.signal;
    const forward = (): void => call.abort(given?.aborted ? given.reason : this.#closing.signal.reason);
    if (given?.aborted) forward();
    given?.addEventListener("abort", forward, { once: true });
    this.#closing.signal.addEventListener("abort", forward, { once: true });
    try {
      return await fn({ signal: call.signal, timeoutMs });
    } catch (err) {
      throw TaskyardError.from(err);
    } finally {
      given?.removeEventListener("abort", forward);
      this.#closing.signal.removeEventListener("abort", forward);
    }
  }
}
