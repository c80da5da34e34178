// The worker against a fake WorkerService (a Connect server on a loopback port, HTTP/2):
// the protocol as the worker speaks it, message by message.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { spawn } from "node:child_process";
import * as http2 from "node:http2";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { create, fromJson, toJson } from "@bufbuild/protobuf";
import { durationMs, ListValueSchema, timestampFromMs, ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import * as otel from "@opentelemetry/api";
import {
  AttemptAborted,
  FatalError,
  RetryAfterError,
  TaskService,
  TaskyardError,
  TaskyardWorker,
  WorkerService,
} from "../dist/index.js";
import { TaskSchema } from "../dist/gen/taskyard/v1/task_pb.js";
import { AttemptSchema } from "../dist/gen/taskyard/worker/v1/worker_service_pb.js";

const VERSION = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;

function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One Work stream as the fake gateway sees it: what the worker sent, and what to answer. */
class FakeStream {
  log = []; // every request, in order, a Reports as its parts (starts, then outcomes, as the gateway applies them)
  wire = []; // every request as it came, a Reports whole
  headers;
  #cursor = new Map(); // case -> index of the next one to take
  #waiters = [];
  #out = [];
  #outWake;
  halfClosed = deferred();

  constructor(headers) {
    this.headers = headers;
  }

  received(req) {
    this.wire.push(req.message);
    if (req.message.case === "reports") {
      const { started, outcomes } = req.message.value;
      this.log.push(...started.map((value) => ({ case: "started", value })));
      this.log.push(...outcomes.map((value) => ({ case: "outcome", value })));
    } else {
      this.log.push(req.message);
    }
    for (const w of this.#waiters.splice(0)) w();
  }

  /** The next message of this case the worker sent (waits for it). */
  async take(kind) {
    for (;;) {
      const from = this.#cursor.get(kind) ?? 0;
      const i = this.log.findIndex((m, j) => j >= from && m.case === kind);
      if (i >= 0) {
        this.#cursor.set(kind, i + 1);
        return this.log[i].value;
      }
      await new Promise((r) => this.#waiters.push(r));
    }
  }

  cases() {
    return this.log.map((m) => m.case).filter((c) => c !== "heartbeat");
  }

  send(message) {
    this.#out.push({ message });
    this.#outWake?.();
  }

  /** Ends the stream: OK, or with `error`. */
  end(error) {
    this.#out.push({ end: true, error });
    this.#outWake?.();
  }

  async *responses(signal) {
    for (;;) {
      const item = this.#out.shift();
      if (item === undefined) {
        await new Promise((r) => {
          this.#outWake = r;
          signal.addEventListener("abort", r, { once: true });
        });
        if (signal.aborted) return;
        continue;
      }
      if (item.end) {
        if (item.error) throw item.error;
        return;
      }
      yield { message: item.message };
    }
  }
}

/** A gateway serving WorkerService (and SubmitTask, for children) on a free loopback port. */
async function fakeGateway({ refuse, submitTask } = {}) {
  const streams = [];
  const opened = [];
  const streamNo = (n) => {
    while (opened.length <= n) opened.push(deferred());
    return opened[n].promise;
  };
  const routes = (router) => {
    router.service(WorkerService, {
      async *work(requests, ctx) {
        if (refuse) throw refuse;
        const s = new FakeStream(ctx.requestHeader);
        streamNo(streams.length);
        opened[streams.length].resolve(s);
        streams.push(s);
        void (async () => {
          try {
            for await (const req of requests) s.received(req);
            s.halfClosed.resolve();
          } catch {
            // The stream was torn down (the test ending): there is no half-close to wait for.
          }
        })();
        yield* s.responses(ctx.signal);
      },
    });
    router.service(TaskService, {
      submitTask: submitTask ?? ((req) => ({ task: create(TaskSchema, { id: "child-1", name: req.task.name }), created: true })),
    });
  };
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const sessions = new Set();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    target: `127.0.0.1:${server.address().port}`,
    stream: streamNo,
    stop: () => {
      for (const s of sessions) s.destroy();
      return new Promise((r) => server.close(r));
    },
  };
}

let leases = 0;
function attempt(name, fields = {}) {
  leases += 1;
  return create(AttemptSchema, { taskId: `t-${leases}`, name, attempt: 1, leaseToken: `lease-${leases}`, ...fields });
}

const refOf = (a) => ({ taskId: a.taskId, attempt: a.attempt, leaseToken: a.leaseToken });
const welcome = (fields = {}) => ({ case: "welcome", value: { workerId: "w-1", ...fields } });
const attempts = (...list) => ({ case: "attempts", value: { attempts: list } });
const quiet = { warn: () => {}, debug: () => {} };

/**
 * A worker on a fake gateway, run; whatever the test does, it is stopped afterwards (the
 * gateway going away ends a stream the drain did not).
 */
async function boot(t, register, options = {}, gwOptions = {}) {
  const gw = await fakeGateway(gwOptions);
  const worker = new TaskyardWorker(gw.target, { tls: false, token: "tok", logger: quiet, ...options });
  register(worker);
  const running = worker.run();
  t.after(async () => {
    const stopped = worker.stop();
    await gw.stop();
    await stopped;
  });
  return { gw, worker, running, s: await gw.stream(0) };
}

/** A worker whose first stream is welcomed. */
async function started(t, register, options = {}, gwOptions = {}) {
  const booted = await boot(t, register, options, gwOptions);
  await booted.s.take("hello");
  booted.s.send(welcome({ heartbeatInterval: { seconds: 60n } }));
  return booted;
}

/** Stops the worker as a drain does, the fake gateway ending the stream after the worker's side. */
async function drained(worker, running, s) {
  await Promise.all([worker.stop(), s.halfClosed.promise.then(() => s.end())]);
  await running;
}

test("hello declares the functions, slots and sdk; the welcome calls onReady", async (t) => {
  const ready = deferred();
  const { worker, running, s } = await boot(
    t,
    (w) => {
      w.register("echo", (task) => task.args[0]);
      w.register("report", () => null, { timeoutMs: 1500, maxRetries: 2, rateLimit: "10/s", concurrency: 3, limitKey: "customer" });
      w.onReady(ready.resolve);
    },
    { slots: 3, name: "billing@host-1" },
  );
  const hello = await s.take("hello");
  assert.equal(s.headers.get("authorization"), "Bearer tok");
  assert.equal(hello.workerName, "billing@host-1");
  assert.equal(hello.slots, 3);
  assert.equal(hello.sdk, `typescript/${VERSION}`);
  assert.deepEqual(hello.tasks.map((d) => d.name), ["echo", "report"]);
  const [echo, report] = hello.tasks;
  assert.equal(echo.timeout, undefined);
  assert.equal(echo.maxRetries, undefined);
  assert.equal(durationMs(report.timeout), 1500);
  assert.deepEqual([report.maxRetries, report.rateLimit, report.concurrency, report.limitKey], [2, "10/s", 3, "customer"]);
  s.send(welcome({ workerId: "pool-7" }));
  assert.equal(await ready.promise, "pool-7");
  assert.equal(worker.workerId, "pool-7");
  await drained(worker, running, s);
  assert.deepEqual(s.cases(), ["hello", "drain"]);
});

test("an attempt is started, run with its context, and its result or failure reported", async (t) => {
  const seen = {};
  const { s } = await started(t, (w) => {
    w.register("echo", (task) => {
      seen.echo = task;
      return task.args[0];
    });
    w.register("boom", () => {
      throw new TypeError("bad input");
    });
    w.register("fatal", () => {
      throw new FatalError("no", { type: "Fatal" });
    });
    w.register("later", async () => {
      throw new RetryAfterError(2500, "busy");
    });
    w.register("nothing", () => undefined);
  });
  const echo = attempt("echo", {
    kwargs: { k: [1, "x"] },
    labels: { team: "billing" },
    parentId: "p-1",
    rootId: "r-1",
    attempt: 2,
    retriesLeft: 1,
    queue: "reports",
  });
  echo.args = fromJson(ListValueSchema, [{ a: [1, "x"] }]);
  const boom = attempt("boom");
  const fatal = attempt("fatal");
  const later = attempt("later");
  const nothing = attempt("nothing");
  s.send(attempts(echo, boom, fatal, later, nothing));
  const outcomes = new Map();
  for (let i = 0; i < 5; i++) {
    const o = await s.take("outcome");
    outcomes.set(o.ref.taskId, o);
  }
  // Each Started comes before its Outcome.
  const order = s.log.filter((m) => m.case === "started" || m.case === "outcome").map((m) => `${m.case}:${m.value.ref.taskId}`);
  for (const a of [echo, boom, fatal, later, nothing]) {
    assert.ok(order.indexOf(`started:${a.taskId}`) < order.indexOf(`outcome:${a.taskId}`), order.join(" "));
  }
  const result = outcomes.get(echo.taskId);
  assert.deepEqual(result.ref, { ...refOf(echo), $typeName: "taskyard.worker.v1.AttemptRef" });
  assert.equal(result.outcome.case, "result");
  assert.deepEqual(toJson(ValueSchema, result.outcome.value), { a: [1, "x"] });
  assert.equal(result.cancelled, false);
  assert.deepEqual(
    [seen.echo.id, seen.echo.attempt, seen.echo.parentId, seen.echo.rootId, seen.echo.queue, seen.echo.retriesLeft],
    [echo.taskId, 2, "p-1", "r-1", "reports", 1],
  );
  assert.deepEqual(seen.echo.kwargs, { k: [1, "x"] });
  assert.deepEqual(seen.echo.labels, { team: "billing" });
  assert.equal(seen.echo.signal.aborted, false);

  const failed = outcomes.get(boom.taskId).outcome.value;
  assert.deepEqual([failed.type, failed.message, failed.retryable], ["TypeError", "bad input", true]);
  assert.match(failed.traceback, /TypeError: bad input\n\s+at /);
  const f = outcomes.get(fatal.taskId).outcome.value;
  assert.deepEqual([f.type, f.message, f.retryable], ["Fatal", "no", false]);
  const l = outcomes.get(later.taskId).outcome.value;
  assert.deepEqual([l.type, l.retryable, durationMs(l.retryDelay)], ["RetryAfterError", true, 2500]);
  const n = outcomes.get(nothing.taskId).outcome;
  assert.equal(n.case, "result");
  assert.equal(n.value.kind.case, "nullValue");
});

test("a result JSON cannot carry, or over the welcome's limit, fails the attempt; long texts are cut", async (t) => {
  const { s } = await boot(t, (w) => {
    w.register("date", () => new Date());
    w.register("big", () => "x".repeat(100));
    w.register("long", (task) => {
      task.log("info", "y".repeat(20_000));
      throw new Error("z".repeat(20_000));
    });
  });
  s.send(welcome({ maxResultBytes: 50n }));
  s.send(attempts(attempt("date"), attempt("big")));
  const first = (await s.take("outcome")).outcome.value;
  const second = (await s.take("outcome")).outcome.value;
  assert.deepEqual([first.type, first.retryable], ["TypeError", true]);
  assert.match(first.message, /a Date is not a JSON value/);
  assert.deepEqual([second.type, second.retryable], ["ResultTooLarge", false]);
  // Text past 16,384 characters is cut: a message over the stream's limit would end the stream.
  s.send(attempts(attempt("long")));
  const long = (await s.take("outcome")).outcome.value;
  assert.equal(long.message, `${"z".repeat(16_384)}... (3616 more characters)`);
  assert.ok(long.traceback.length <= 16_384 + 40, `traceback of ${long.traceback.length}`);
  assert.equal((await s.take("logs")).lines[0].message, `${"y".repeat(16_384)}... (3616 more characters)`);
});

test("a cancel aborts the body's signal and its outcome is reported cancelled", async (t) => {
  const reason = deferred();
  const { s } = await started(t, (w) =>
    w.register("sleep", async (task) => {
      await once(task.signal, "abort");
      reason.resolve(task.signal.reason);
      throw task.signal.reason;
    }),
  );
  const a = attempt("sleep");
  s.send(attempts(a));
  await s.take("started");
  s.send({ case: "cancel", value: { ref: refOf(a), reason: "by the user", grace: { seconds: 3n } } });
  const why = await reason.promise;
  assert.ok(why instanceof AttemptAborted);
  assert.equal(why.kind, "cancel");
  assert.equal(why.message, "by the user");
  const outcome = await s.take("outcome");
  assert.equal(outcome.cancelled, true);
  assert.equal(outcome.outcome.value.type, "AttemptAborted");
});

test("a cancel of an attempt not yet started is its outcome: the body never runs", async (t) => {
  const ran = [];
  const release = deferred();
  const { s } = await started(
    t,
    (w) =>
      w.register("job", async (task) => {
        ran.push(task.id);
        await release.promise;
      }),
    { slots: 1 },
  );
  const first = attempt("job");
  const second = attempt("job");
  s.send(attempts(first, second));
  await s.take("started");
  s.send({ case: "cancel", value: { ref: refOf(second), reason: "no longer wanted" } });
  const outcome = await s.take("outcome");
  assert.equal(outcome.ref.taskId, second.taskId);
  assert.equal(outcome.cancelled, true);
  release.resolve();
  assert.equal((await s.take("outcome")).ref.taskId, first.taskId);
  assert.deepEqual(ran, [first.taskId]);
});

test("a revoke aborts the body and frees its slot; the late outcome is still sent", async (t) => {
  const release = deferred();
  const reason = deferred();
  const { s } = await started(
    t,
    (w) =>
      w.register("stubborn", async (task) => {
        task.signal.addEventListener("abort", () => reason.resolve(task.signal.reason));
        await release.promise; // ignores the signal
        task.log("info", "after the revoke"); // dropped: its lease is gone
        return "done";
      }),
    { slots: 1 },
  );
  const first = attempt("stubborn");
  s.send(attempts(first));
  await s.take("started");
  s.send({ case: "revoke", value: { ref: refOf(first), reason: "cancel not honoured" } });
  assert.equal((await reason.promise).kind, "revoke");
  // The one slot is free while the first body still runs: a new attempt starts.
  const second = attempt("stubborn");
  s.send(attempts(second));
  assert.equal((await s.take("started")).ref.taskId, second.taskId);
  release.resolve();
  const late = [await s.take("outcome"), await s.take("outcome")].find((o) => o.ref.taskId === first.taskId);
  assert.equal(late.outcome.case, "result");
  assert.ok(!s.log.some((m) => m.case === "logs" && m.value.ref.taskId === first.taskId));
});

test("the deadline aborts the body and fails it with TimeoutError", async (t) => {
  const { s } = await started(t, (w) =>
    w.register("slow", async (task) => {
      await once(task.signal, "abort");
      assert.equal(task.signal.reason.kind, "deadline");
      throw task.signal.reason;
    }),
  );
  s.send(attempts(attempt("slow", { deadline: timestampFromMs(Date.now() + 50) })));
  const outcome = await s.take("outcome");
  assert.equal(outcome.outcome.value.type, "TimeoutError");
  assert.equal(outcome.cancelled, false);
});

test("the worker never runs more attempts than its slots", async (t) => {
  let running = 0;
  let most = 0;
  const gates = new Map();
  const gateFor = (id) => {
    if (!gates.has(id)) gates.set(id, deferred());
    return gates.get(id);
  };
  const { s } = await started(
    t,
    (w) =>
      w.register("job", async (task) => {
        running += 1;
        most = Math.max(most, running);
        await gateFor(task.id).promise;
        running -= 1;
        return task.id;
      }),
    { slots: 2 },
  );
  // The gateway should never send more than the slots: the worker holds the rest back.
  s.send(attempts(...Array.from({ length: 5 }, () => attempt("job"))));
  for (let i = 0; i < 5; i++) {
    const next = await s.take("started");
    gateFor(next.ref.taskId).resolve();
    await s.take("outcome");
  }
  assert.equal(most, 2);
  // An outcome that frees a slot may share its Reports with the start it lets in: counted first.
  let inHand = 0;
  for (const m of s.wire) {
    if (m.case === "started") inHand += 1;
    if (m.case === "outcome") inHand -= 1;
    if (m.case === "reports") inHand += m.value.started.length - m.value.outcomes.length;
    assert.ok(inHand <= 2, `${inHand} started without their outcomes`);
  }
});

test("stop drains: no new attempts, the running one finishes and reports, then the stream ends", async (t) => {
  const release = deferred();
  const { worker, running, s } = await boot(t, (w) =>
    w.register("job", async () => {
      await release.promise;
      return "finished";
    }),
  );
  s.send(welcome());
  const a = attempt("job");
  s.send(attempts(a));
  await s.take("started");
  let stopped = false;
  const stopping = worker.stop().then(() => (stopped = true));
  await s.take("drain");
  release.resolve();
  const outcome = await s.take("outcome");
  assert.equal(outcome.outcome.case, "result");
  await s.halfClosed.promise; // the worker ended its side after its last outcome
  assert.equal(stopped, false); // ... and waits for the gateway to end the stream
  s.end();
  await running;
  await stopping;
  assert.deepEqual(s.cases(), ["hello", "started", "drain", "outcome"]);
});

test("heartbeats go out every welcome interval", async (t) => {
  const { s } = await boot(t, (w) => w.register("job", () => null));
  s.send(welcome({ heartbeatInterval: { nanos: 20_000_000 } }));
  for (let i = 0; i < 3; i++) await s.take("heartbeat");
});

test("a refused token ends run() with UNAUTHENTICATED", async (t) => {
  const gw = await fakeGateway({ refuse: new ConnectError("token not accepted", Code.Unauthenticated) });
  t.after(gw.stop);
  const worker = new TaskyardWorker(gw.target, { tls: false, token: "wrong", logger: quiet });
  worker.register("job", () => null);
  const err = await worker.run().catch((e) => e);
  assert.ok(err instanceof TaskyardError, String(err));
  assert.equal(err.code, "UNAUTHENTICATED");
  assert.match(err.message, /^UNAUTHENTICATED: token not accepted/);
});

test("a broken stream abandons its attempts and a new one says hello again", async (t) => {
  const reason = deferred();
  const warned = [];
  const { gw, worker, running, s: first } = await boot(
    t,
    (w) =>
      w.register("job", async (task) => {
        await once(task.signal, "abort");
        reason.resolve(task.signal.reason);
        return "too late";
      }),
    { logger: { warn: (m) => warned.push(m) } },
  );
  first.send(welcome());
  first.send(attempts(attempt("job")));
  await first.take("started");
  first.end(new ConnectError("gateway going away", Code.Unavailable));
  assert.equal((await reason.promise).kind, "disconnect");
  const second = await gw.stream(1);
  await second.take("hello");
  assert.match(warned[0], /UNAVAILABLE: gateway going away; connecting again in \d+ ms/);
  second.send(welcome({ workerId: "w-2" }));
  await drained(worker, running, second);
  assert.equal(worker.workerId, "w-2");
  // Nothing of the abandoned attempt is reported, on either stream.
  assert.ok(!first.log.some((m) => m.case === "outcome"));
  assert.deepEqual(second.cases(), ["hello", "drain"]);
});

test("a gateway that never answers the hello gets a new stream after welcomeTimeoutMs", async (t) => {
  const warned = [];
  const { s: first, gw } = await boot(t, (w) => w.register("job", () => null), {
    welcomeTimeoutMs: 50,
    logger: { warn: (m) => warned.push(m) },
  });
  await first.take("hello");
  const second = await gw.stream(1);
  await second.take("hello");
  assert.match(warned[0], /^taskyard worker: DEADLINE_EXCEEDED: no Welcome within 50 ms of the Hello; connecting again/);
});

test("log lines are batched in order and progress follows them", async (t) => {
  const { s } = await started(t, (w) =>
    w.register("chatty", (task) => {
      task.log("info", "one");
      task.log("INFO", "two");
      task.log("warning", "three");
      task.progress(0.5, "half");
      assert.throws(() => task.progress(1.5), RangeError);
      task.log("info", "four");
      return "ok";
    }),
  );
  s.send(attempts(attempt("chatty")));
  await s.take("outcome");
  assert.deepEqual(s.cases(), ["hello", "started", "logs", "progress", "logs", "outcome"]);
  const first = await s.take("logs");
  assert.deepEqual(first.lines.map((l) => [l.level, l.message]), [["info", "one"], ["info", "two"], ["warning", "three"]]);
  const progress = await s.take("progress");
  assert.deepEqual([progress.fraction, progress.message], [0.5, "half"]);
  assert.deepEqual((await s.take("logs")).lines.map((l) => l.message), ["four"]);
});

test("starts and outcomes queued together go as one Reports, after the lines logged before them", async (t) => {
  const { s } = await started(
    t,
    (w) =>
      w.register("quick", (task) => {
        if (task.args[0]) task.log("info", "before its outcome");
        return null;
      }),
    { slots: 3 },
  );
  // One Attempts: the three start in one turn, their bodies end in one turn, the first with a line.
  const list = [attempt("quick", { args: fromJson(ListValueSchema, [true]) }), attempt("quick"), attempt("quick")];
  s.send(attempts(...list));
  const ids = list.map((a) => a.taskId);
  assert.deepEqual([await s.take("outcome"), await s.take("outcome"), await s.take("outcome")].map((o) => o.ref.taskId), ids);
  assert.deepEqual(s.cases(), ["hello", "started", "started", "started", "logs", "outcome", "outcome", "outcome"]);
  const wire = s.wire.filter((m) => m.case !== "hello" && m.case !== "heartbeat");
  assert.deepEqual(wire.map((m) => m.case), ["reports", "logs", "reports"]);
  assert.deepEqual([wire[0].value.started.map((x) => x.ref.taskId), wire[0].value.outcomes.length], [ids, 0]);
  assert.deepEqual(wire[1].value.lines.map((l) => l.message), ["before its outcome"]);
  assert.deepEqual([wire[2].value.started.length, wire[2].value.outcomes.map((o) => o.ref.taskId)], [0, ids]);
});

test("a child is submitted with this task as parent, in the attempt's trace", async (t) => {
  // What an OpenTelemetry SDK registers: the active context follows async calls.
  const store = new AsyncLocalStorage();
  otel.context.setGlobalContextManager({
    active: () => store.getStore() ?? otel.ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => store.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  });
  t.after(() => otel.context.disable());
  const submitted = deferred();
  const { s } = await started(
    t,
    (w) => w.register("parent", (task) => task.submitChild("echo", ["hi"], { priority: "HIGH" })),
    {},
    {
      submitTask: (req, ctx) => {
        submitted.resolve({ task: req.task, traceparent: ctx.requestHeader.get("traceparent") });
        return { task: create(TaskSchema, { id: "child-9", name: req.task.name }), created: true };
      },
    },
  );
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const a = attempt("parent", { traceHeaders: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
  s.send(attempts(a));
  const { task, traceparent } = await submitted.promise;
  assert.equal(task.name, "echo");
  assert.equal(task.parentId, a.taskId);
  assert.match(traceparent ?? "", new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const outcome = await s.take("outcome");
  assert.equal(outcome.outcome.value.kind.value, "child-9");
});

test("registrations and options are checked when given", () => {
  const worker = new TaskyardWorker("127.0.0.1:1", { tls: false });
  worker.register("ok.name:v1-x_y", () => null);
  assert.throws(() => worker.register("ok.name:v1-x_y", () => null), /registered already/);
  assert.throws(() => worker.register("bad name", () => null), /1 to 200 letters/);
  assert.throws(() => worker.register("f", "not a function"), /must be a function/);
  assert.throws(() => worker.register("g", () => null, { timeoutMs: 0 }), /more than 0/);
  assert.throws(() => worker.register("h", () => null, { maxRetries: 1.5 }), /maxRetries must be an integer/);
  assert.throws(() => new TaskyardWorker("127.0.0.1:1", { tls: false, slots: 0 }), /slots must be an integer from 1 to 256/);
  assert.throws(() => new RetryAfterError(-1, "x"), /delayMs/);
});

test("run() without a registered function is refused", async () => {
  const worker = new TaskyardWorker("127.0.0.1:1", { tls: false });
  await assert.rejects(worker.run(), /register at least one function/);
});

test("examples/worker.mjs runs greet, then drains and exits 0 on SIGTERM", async (t) => {
  const gw = await fakeGateway();
  t.after(gw.stop);
  const child = spawn(process.execPath, ["examples/worker.mjs"], {
    cwd: new URL("..", import.meta.url),
    env: { ...process.env, TASKYARD_TARGET: gw.target, TASKYARD_TOKEN: "tok" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  t.after(() => child.kill("SIGKILL"));
  const exited = once(child, "exit");
  const lines = createInterface({ input: child.stdout });
  const s = await gw.stream(0);
  const hello = await s.take("hello");
  assert.deepEqual(hello.tasks.map((d) => [d.name, durationMs(d.timeout), d.maxRetries]), [["greet", 10_000, 3]]);
  s.send(welcome({ workerId: "w-example" }));
  const [line] = await once(lines, "line");
  assert.equal(line, "worker w-example ready");
  s.send(attempts(attempt("greet", { args: fromJson(ListValueSchema, ["Ada"]) })));
  const outcome = await s.take("outcome");
  assert.equal(toJson(ValueSchema, outcome.outcome.value), "Hello, Ada!");
  assert.deepEqual((await s.take("logs")).lines.map((l) => l.message), ["greeting Ada (attempt 1)"]);
  child.kill("SIGTERM");
  await s.take("drain");
  await s.halfClosed.promise;
  s.end();
  const [code, signal] = await exited;
  assert.deepEqual([code, signal], [0, null]);
});
