// Offline tests: the client against an in-memory Connect router (no network, no gateway).
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { TaskyardClient, TaskyardError } from "../dist/index.js";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { TaskSchema, TaskState } from "../dist/gen/taskyard/v1/task_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "../dist/gen/google/rpc/error_details_pb.js";

function fakeGateway(impl, interceptors = []) {
  const transport = createRouterTransport(({ service }) => service(TaskService, impl), {
    transport: { interceptors },
  });
  return new TaskyardClient("gateway:50051", { transport });
}

const stored = (spec, extra = {}) =>
  create(TaskSchema, { id: "t-1", name: spec.name, args: spec.args, kwargs: spec.kwargs, ...extra });

test("submit converts JSON both ways and makes a request id", async () => {
  let seen;
  const client = fakeGateway({
    submitTask(req) {
      seen = req.task;
      return { task: stored(req.task, { requestId: req.task.requestId }), created: true };
    },
  });
  const { task, created } = await client.submit("echo", [1, "a", null, [true]], {
    kwargs: { nested: { x: 1.5 } },
    priority: "HIGH",
    taskTimeoutMs: 1500,
  });
  assert.equal(created, true);
  assert.match(seen.requestId, /^[0-9a-f-]{36}$/);
  assert.equal(seen.timeout.seconds, 1n);
  assert.equal(seen.timeout.nanos, 500_000_000);
  assert.deepEqual(task.args, [1, "a", null, [true]]);
  assert.deepEqual(task.kwargs, { nested: { x: 1.5 } });
  assert.equal(task.priority, "NORMAL");
  assert.equal(task.result, null);
});

test("a batch keeps given request ids and fills the missing ones", async () => {
  let ids;
  const client = fakeGateway({
    batchSubmitTasks(req) {
      ids = req.tasks.map((t) => t.requestId);
      return { tasks: req.tasks.map((_, i) => ({ id: `t-${i}`, state: TaskState.QUEUED, created: true })) };
    },
  });
  const out = await client.submitBatch([{ name: "add", requestId: "mine" }, { name: "add" }]);
  assert.equal(ids[0], "mine");
  assert.match(ids[1], /^[0-9a-f-]{36}$/);
  assert.deepEqual(out[1], { id: "t-1", state: "QUEUED", created: true });
});

test("values JSON cannot carry are refused before sending", async () => {
  const client = fakeGateway({});
  await assert.rejects(client.submit("echo", [Number.NaN]), /task\.args\[0\]: NaN/);
  await assert.rejects(client.submit("echo", [new Date()]), /a Date is not a JSON value/);
  await assert.rejects(client.submit("echo", [], { kwargs: { u: undefined } }), /task\.kwargs\.u/);
  await assert.rejects(client.submit("echo", [], { priority: "urgent" }), /priority must be/);
});

test("errors carry the code, ErrorInfo and every field violation", async () => {
  const client = fakeGateway({
    batchSubmitTasks() {
      throw new ConnectError("tasks[1].name: must not be empty", Code.InvalidArgument, undefined, [
        { desc: ErrorInfoSchema, value: { reason: "INVALID_ARGUMENT", domain: "taskyard.dev", metadata: { violations: "1" } } },
        { desc: BadRequestSchema, value: { fieldViolations: [{ field: "tasks[1].name", description: "must not be empty", reason: "INVALID_ARGUMENT" }] } },
      ]);
    },
  });
  const err = await client.submitBatch([{ name: "add" }, { name: "" }]).catch((e) => e);
  assert.ok(err instanceof TaskyardError);
  assert.equal(err.code, "INVALID_ARGUMENT");
  assert.equal(err.grpcCode, 3);
  assert.equal(err.domain, "taskyard.dev");
  assert.deepEqual(err.metadata, { violations: "1" });
  assert.deepEqual(err.violations, [
    { field: "tasks[1].name", description: "must not be empty", reason: "INVALID_ARGUMENT" },
  ]);
});

test("an error without details has an empty reason and no violations", async () => {
  const client = fakeGateway({
    getTask() {
      throw new ConnectError("message larger than max", Code.ResourceExhausted);
    },
  });
  const err = await client.get("x").catch((e) => e);
  assert.equal(err.code, "RESOURCE_EXHAUSTED");
  assert.equal(err.reason, "");
  assert.deepEqual(err.violations, []);
});

test("a timed-out wait is a result; long waits are split in 300 s calls", async () => {
  const asked = [];
  let finishOn = Infinity;
  const client = fakeGateway({
    waitTask(req) {
      asked.push(Number(req.timeout.seconds));
      const done = asked.length >= finishOn;
      const state = done ? TaskState.SUCCESS : TaskState.RUNNING;
      return { task: create(TaskSchema, { id: req.id, state }), timedOut: !done };
    },
  });
  const short = await client.wait("t", { waitMs: 10 });
  assert.equal(short.timedOut, true);
  assert.equal(short.task.isFinal, false);
  assert.equal(asked[0], 0);
  asked.length = 0;
  finishOn = 2;
  const long = await client.wait("t", { waitMs: 400_000 });
  assert.equal(long.timedOut, false);
  assert.equal(long.task.state, "SUCCESS");
  assert.deepEqual(asked, [300, 300]); // this fake answers at once: the whole wait is still ahead
});

test("run submits and waits in one call; a timed-out run is a result", async () => {
  const runs = [];
  const waits = [];
  const client = fakeGateway({
    async runTask(req) {
      runs.push(req);
      const done = req.task.name === "add";
      // Holds a short wait as the gateway does; a long one it answers at once.
      const ms = Number(req.timeout.seconds) * 1000 + req.timeout.nanos / 1e6;
      if (!done && ms < 1000) await new Promise((resolve) => setTimeout(resolve, ms));
      const state = done ? TaskState.SUCCESS : TaskState.RUNNING;
      const result = done ? { kind: { case: "numberValue", value: 5 } } : undefined;
      return { task: stored(req.task, { state, result }), created: true, final: done };
    },
    waitTask(req) {
      waits.push(Number(req.timeout.seconds));
      return { task: create(TaskSchema, { id: req.id, state: TaskState.SUCCESS }), timedOut: false };
    },
  });
  const done = await client.run("add", [2, 3]);
  assert.deepEqual([done.timedOut, done.created, done.task.state, done.task.result], [false, true, "SUCCESS", 5]);
  assert.equal(Number(runs[0].timeout.seconds), 30);
  assert.match(runs[0].task.requestId, /^[0-9a-f-]{36}$/);
  const slow = await client.run("sleep", [30], { waitMs: 10 });
  assert.deepEqual([slow.timedOut, slow.task.isFinal, slow.task.id], [true, false, "t-1"]);
  assert.equal(waits.length, 0);
  // Longer than one call: the gateway waits 300 s, the rest is a wait.
  const long = await client.run("sleep", [30], { waitMs: 400_000 });
  assert.equal(Number(runs[2].timeout.seconds), 300);
  assert.deepEqual([long.timedOut, long.task.state, waits.length], [false, "SUCCESS", 1]);
  await assert.rejects(client.run("add", [], { waitMs: -1 }), TypeError);
});

test("tasks() follows page tokens", async () => {
  const pages = { "": ["a", "b"], p2: ["c"] };
  const client = fakeGateway({
    listTasks(req) {
      const ids = pages[req.pageToken];
      return {
        tasks: ids.map((id) => create(TaskSchema, { id })),
        nextPageToken: req.pageToken === "" ? "p2" : "",
      };
    },
  });
  const ids = [];
  for await (const t of client.tasks({ pageSize: 2 })) ids.push(t.id);
  assert.deepEqual(ids, ["a", "b", "c"]);
});

test("a closed client refuses calls", async () => {
  const client = fakeGateway({});
  client.close();
  const err = await client.get("x").catch((e) => e);
  assert.ok(err instanceof TaskyardError);
  assert.equal(err.code, "CANCELLED");
  assert.match(err.message, /closed/);
  await assert.rejects(client.wait("x"), (e) => e instanceof TaskyardError && e.code === "CANCELLED");
});

test("a wait stops when the call's deadline is too close to ask again", async () => {
  let calls = 0;
  const client = fakeGateway({
    // As the gateway does: hold the wait, but answer 100 ms before the caller's deadline.
    async waitTask(req, ctx) {
      calls++;
      const hold = Math.max(0, Math.min(Number(req.timeout.seconds) * 1000, (ctx.timeoutMs() ?? Infinity) - 100));
      await new Promise((r) => setTimeout(r, hold));
      return { task: create(TaskSchema, { id: req.id, state: TaskState.RUNNING }), timedOut: true };
    },
  });
  const err = await client.wait("t", { waitMs: 10_000, timeoutMs: 300 }).catch((e) => e);
  assert.ok(err instanceof TaskyardError);
  assert.equal(err.code, "DEADLINE_EXCEEDED");
  assert.ok(calls >= 1 && calls <= 2, `${calls} WaitTask calls`);
});

test("tasks() stops on a page token that points back at itself", async () => {
  const client = fakeGateway({
    listTasks(req) {
      return { tasks: [create(TaskSchema, { id: `t-${req.pageToken}` })], nextPageToken: "stuck" };
    },
  });
  const ids = [];
  await assert.rejects(async () => {
    for await (const t of client.tasks()) ids.push(t.id);
  }, /stuck/);
  assert.deepEqual(ids, ["t-", "t-stuck"]);
});

test("durations are whole nanoseconds, and bad ones are refused before sending", async () => {
  const seen = [];
  const client = fakeGateway({
    submitTask(req) {
      seen.push(req.task);
      return { task: stored(req.task), created: true };
    },
  });
  await client.submit("echo", [], { taskTimeoutMs: 1.0000004, countdownMs: 999.9999999 });
  assert.equal(seen[0].timeout.seconds, 0n);
  assert.equal(seen[0].timeout.nanos, 1_000_000);
  assert.equal(seen[0].countdown.seconds, 1n);
  assert.equal(seen[0].countdown.nanos, 0);
  for (const bad of [Number.NaN, -1, Infinity]) {
    await assert.rejects(client.submit("echo", [], { taskTimeoutMs: bad }), TypeError);
    await assert.rejects(client.wait("t", { waitMs: bad }), TypeError);
    await assert.rejects(client.cancel("t", { waitMs: bad }), TypeError);
    await assert.rejects(client.get("t", { timeoutMs: bad }), TypeError);
  }
  assert.equal(seen.length, 1);
});

test("a token is not sent in clear off loopback", () => {
  assert.throws(() => new TaskyardClient("gateway.example.com:50051", { tls: false, token: "t" }), /in clear/);
  new TaskyardClient("127.0.0.1:50051", { tls: false, token: "t" }).close();
  new TaskyardClient("[::1]:50051", { tls: false, token: "t" }).close();
  assert.throws(() => new TaskyardClient("no-port"), /host:port/);
});
