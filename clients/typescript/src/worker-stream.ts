/**
 * One WorkerService.Work stream: Hello, Welcome, the attempts it holds, heartbeats, and the
 * drain that ends it. A worker opens a new one after a stream breaks.
 */
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { durationMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { TaskyardClient } from "./client.js";
import {
  FailureSchema,
  ReportsSchema,
  WorkRequestSchema,
  type Attempt,
  type HelloSchema,
  type Welcome,
  type WorkerService,
  type WorkResponse,
} from "./gen/taskyard/worker/v1/worker_service_pb.js";
import { DEFAULT_MAX_RESULT_BYTES, FatalError } from "./worker-errors.js";
import { AttemptRun, attemptKey, type AttemptDeps, type TaskFunction, type WorkMessage } from "./worker-task.js";

/** Where the worker says what happens to it that is not an error of run(). */
export interface WorkerLogger {
  debug(message: string): void;
  warn(message: string): void;
}

export interface StreamSetup {
  rpc: Client<typeof WorkerService>;
  hello: MessageInitShape<typeof HelloSchema>;
  functions: ReadonlyMap<string, TaskFunction>;
  slots: number;
  client: TaskyardClient;
  logger: WorkerLogger;
  /** How long to wait for the Welcome before opening a new stream. */
  welcomeTimeoutMs: number;
  onWelcome(welcome: Welcome): void;
}

/** gRPC's usual cap, when the Welcome gives none. */
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** When the Welcome gives no heartbeat interval; never more often than the floor. */
const DEFAULT_HEARTBEAT_MS = 5_000;
const MIN_HEARTBEAT_MS = 10;
/** After its half-close, how long a drained worker waits for the gateway to end the stream. */
const CLOSE_WAIT_MS = 10_000;
/** The most starts and outcomes one Reports carries: half of gRPC's usual limit, which the gateway's port keeps. */
const REPORTS_BYTES = DEFAULT_MAX_MESSAGE_BYTES / 2;

type WorkRequestInit = MessageInitShape<typeof WorkRequestSchema>;

/**
 * The request side of the stream: messages queued now, sent as Connect asks for them.
 * Starts and outcomes queued side by side go as one Reports: alone at once, under load many
 * together; a log line or progress between them ends the Reports, so order is kept.
 */
class Outbox implements AsyncIterable<WorkRequestInit> {
  #items: WorkRequestInit[] = [];
  #closed = false;
  #wake: (() => void) | undefined;

  get closed(): boolean {
    return this.#closed;
  }

  push(item: WorkRequestInit): boolean {
    if (this.#closed) return false;
    this.#items.push(item);
    this.#wakeUp();
    return true;
  }

  /** Ends the request side once what is queued is sent. */
  close(): void {
    this.#closed = true;
    this.#wakeUp();
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** `first` (a start or an outcome) and the starts and outcomes queued right behind it, as one Reports. */
  #reports(first: WorkRequestInit): WorkRequestInit {
    const reports = create(ReportsSchema);
    let bytes = 0;
    for (let item: WorkRequestInit | undefined = first; item !== undefined && isReport(item); item = this.#items[0]) {
      const req = create(WorkRequestSchema, item);
      const size = toBinary(WorkRequestSchema, req).byteLength;
      const taken = reports.started.length + reports.outcomes.length;
      if (taken > 0 && bytes + size > REPORTS_BYTES) break; // it leads the next Reports
      if (taken > 0) this.#items.shift();
      bytes += size;
      if (req.message.case === "started") reports.started.push(req.message.value);
      else if (req.message.case === "outcome") reports.outcomes.push(req.message.value);
    }
    return { message: { case: "reports", value: reports } };
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WorkRequestInit> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) {
        yield isReport(item) ? this.#reports(item) : item;
      } else if (this.#closed) {
        return;
      } else {
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    }
  }
}

export class WorkStream {
  readonly #setup: StreamSetup;
  readonly #outbox = new Outbox();
  readonly #call = new AbortController();
  /** The attempts that hold a slot: running, not revoked. */
  readonly #held = new Map<string, AttemptRun>();
  /** Attempts handed over beyond the free slots (the gateway should send none): run as slots free. */
  #waiting: Attempt[] = [];
  #welcome: Welcome | undefined;
  #draining = false;
  #heartbeat: NodeJS.Timeout | undefined;
  #closeTimer: NodeJS.Timeout | undefined;
  #welcomeTimer: NodeJS.Timeout | undefined;

  constructor(setup: StreamSetup) {
    this.#setup = setup;
  }

  get welcomed(): boolean {
    return this.#welcome !== undefined;
  }

  /** The worker ended its side after a drain: the stream's end is the worker's. */
  get drained(): boolean {
    return this.#draining && this.#outbox.closed;
  }

  /** Resolves when the gateway ends the stream, rejects with the error it ended with. */
  async run(): Promise<void> {
    this.#send({ case: "hello", value: this.#setup.hello });
    // A gateway that never answers the Hello would hold the worker for ever.
    const ms = this.#setup.welcomeTimeoutMs;
    this.#welcomeTimer = setTimeout(
      () => this.#call.abort(new ConnectError(`no Welcome within ${ms} ms of the Hello`, Code.DeadlineExceeded)),
      ms,
    );
    try {
      for await (const res of this.#setup.rpc.work(this.#outbox, { signal: this.#call.signal })) this.#handle(res);
    } finally {
      this.#end();
    }
  }

  /** No new attempts; the held ones finish and report, then the worker ends its side. */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#send({ case: "drain", value: {} });
    this.#closeIfIdle();
  }

  /** Cancels the stream now: the held attempts are abandoned. */
  abort(reason: string): void {
    this.#call.abort(new ConnectError(reason, Code.Canceled));
  }

  #send(message: WorkMessage): boolean {
    return this.#outbox.push({ message });
  }

  #handle(res: WorkResponse): void {
    const m = res.message;
    switch (m.case) {
      case "welcome":
        this.#welcomed(m.value);
        break;
      case "attempts":
        this.#waiting.push(...m.value.attempts);
        this.#fill();
        break;
      case "cancel": {
        const key = attemptKey(m.value.ref ?? { taskId: "", attempt: 0, leaseToken: "" });
        const run = this.#held.get(key);
        if (run) {
          run.cancel(m.value.reason);
        } else if (this.#unqueue(key)) {
          // Never started: nothing to stop, the cancel is its outcome.
          const failure = create(FailureSchema, { type: "Cancelled", message: m.value.reason || "cancelled before it started" });
          this.#send({ case: "outcome", value: { ref: m.value.ref, outcome: { case: "failure", value: failure }, cancelled: true } });
          this.#closeIfIdle();
        }
        break;
      }
      case "revoke": {
        const key = attemptKey(m.value.ref ?? { taskId: "", attempt: 0, leaseToken: "" });
        const run = this.#held.get(key);
        if (run) {
          // Its slot is free at once; the body may run on, and its late outcome is still sent.
          this.#held.delete(key);
          run.revoke(m.value.reason);
          this.#fill();
        } else {
          this.#unqueue(key);
        }
        this.#closeIfIdle();
        break;
      }
      case "refused": {
        const ref = m.value.ref;
        this.#setup.logger.debug(`taskyard worker: the gateway refused a report on ${ref?.taskId}#${ref?.attempt}: ${m.value.reason}`);
        break;
      }
      default:
        break;
    }
  }

  #welcomed(welcome: Welcome): void {
    clearTimeout(this.#welcomeTimer);
    this.#welcome = welcome;
    const interval = welcome.heartbeatInterval ? durationMs(welcome.heartbeatInterval) : DEFAULT_HEARTBEAT_MS;
    // Kept referenced: while the stream is open the process has work to do.
    this.#heartbeat = setInterval(() => this.#send({ case: "heartbeat", value: {} }), Math.max(MIN_HEARTBEAT_MS, interval));
    this.#setup.onWelcome(welcome);
  }

  #unqueue(key: string): boolean {
    const before = this.#waiting.length;
    this.#waiting = this.#waiting.filter((a) => attemptKey(a) !== key);
    return this.#waiting.length !== before;
  }

  /** Starts waiting attempts while slots are free. */
  #fill(): void {
    const welcome = this.#welcome;
    const deps: AttemptDeps = {
      send: (message) => this.#send(message),
      client: this.#setup.client,
      maxMessageBytes: Number(welcome?.maxMessageBytes || DEFAULT_MAX_MESSAGE_BYTES),
      maxResultBytes: Number(welcome?.maxResultBytes || DEFAULT_MAX_RESULT_BYTES),
    };
    while (this.#held.size < this.#setup.slots) {
      const attempt = this.#waiting.shift();
      if (attempt === undefined) break;
      const fn = this.#setup.functions.get(attempt.name) ?? notRegistered(attempt.name);
      const run = new AttemptRun(attempt, fn, deps);
      this.#held.set(run.key, run);
      run
        .run()
        .catch((err: unknown) => this.#setup.logger.warn(`taskyard worker: attempt ${run.key} ended badly: ${String(err)}`))
        .finally(() => {
          if (this.#held.get(run.key) !== run) return; // revoked or abandoned: its slot is no longer counted
          this.#held.delete(run.key);
          this.#fill();
          this.#closeIfIdle();
        });
    }
  }

  #closeIfIdle(): void {
    if (!this.#draining || this.#outbox.closed || this.#held.size > 0 || this.#waiting.length > 0) return;
    this.#outbox.close();
    this.#closeTimer = setTimeout(() => this.abort("the gateway did not end the stream after the drain"), CLOSE_WAIT_MS);
  }

  #end(): void {
    clearTimeout(this.#welcomeTimer);
    clearInterval(this.#heartbeat);
    clearTimeout(this.#closeTimer);
    this.#outbox.close();
    // Still held when the stream ends: the suite counts them as a died pool's (started
    // ones fail with WorkerProcessDied, the rest go back to their queue); report nothing.
    for (const run of this.#held.values()) run.abandon();
    this.#held.clear();
    this.#waiting = [];
  }
}

function isReport(item: WorkRequestInit): boolean {
  const kind = item.message?.case;
  return kind === "started" || kind === "outcome";
}

function notRegistered(name: string): TaskFunction {
  return () => {
    throw new FatalError(`this worker registered no function ${JSON.stringify(name)}`, { type: "NotRegistered" });
  };
}
