// Offline tests of circuit breakers: a breaker limit through client.limits, a breaker key on
// submit, and a failure's throttled, retryAfterMs and refunded, against an in-memory Connect router.
import assert from "node:assert/strict";
import { test } from "node:test";
import { createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { TaskyardClient } from "../dist/index.js";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { LimitService } from "../dist/gen/taskyard/v1/limit_service_pb.js";
import { TaskSchema, TaskState } from "../dist/gen/taskyard/v1/task_pb.js";

function fakeGateway({ tasks = {}, limits = {} }) {
  const transport = createRouterTransport((router) => {
    router.service(TaskService, tasks);
    router.service(LimitService, limits);
  });
  return new TaskyardClient("gateway:50051", { transport });
}

function storingLimits(stored) {
  return {
    createLimit({ limit }) {
      stored.set(limit.name, limit);
      return { limit };
    },
    getLimit({ name }) {
      return { limit: stored.get(name) };
    },
    listLimits() {
      return { limits: [...stored.values()], nextPageToken: "" };
    },
    updateLimit({ limit }) {
      stored.set(limit.name, limit);
      return { limit };
    },
  };
}

test("limits: a breaker is sent with its numbers and read back by get, list and update", async () => {
  const stored = new Map();
  const client = fakeGateway({ limits: storingLimits(stored) });
  const breaker = { failureThreshold: 5, windowMs: 30_000, minAttempts: 8, coolDownMs: 10_000, halfOpenProbes: 2 };
  const created = await client.limits.create({ name: "payments", breaker, perKey: true });
  assert.deepEqual(created.breaker, breaker);
  const wire = stored.get("payments");
  assert.equal(wire.kind.case, "breaker");
  assert.equal(wire.kind.value.failureThreshold, 5n);
  assert.equal(wire.kind.value.window.seconds, 30n);
  assert.equal(wire.kind.value.coolDown.seconds, 10n);
  assert.equal(wire.kind.value.minAttempts, 8n);
  assert.equal(wire.kind.value.halfOpenProbes, 2n);
  assert.equal(wire.perKey, true);
  const got = await client.limits.get("payments");
  assert.deepEqual(got.breaker, breaker);
  assert.equal(got.rate, undefined);
  assert.equal(got.concurrency, undefined);
  const page = await client.limits.list();
  assert.deepEqual(
    page.limits.map((l) => [l.name, l.breaker?.failureThreshold]),
    [["payments", 5]],
  );
  // Durations not given stay unset: the gateway's defaults (60 s, 30 s) apply.
  const updated = await client.limits.update({ name: "payments", breaker: { failureThreshold: 3 }, perKey: true });
  assert.equal(stored.get("payments").kind.value.window, undefined);
  assert.equal(stored.get("payments").kind.value.coolDown, undefined);
  assert.deepEqual(updated.breaker, {
    failureThreshold: 3,
    windowMs: undefined,
    minAttempts: 0,
    coolDownMs: undefined,
    halfOpenProbes: 0,
  });
});

test("limits: a breaker with another kind, or numbers that are not whole, is refused before sending", async () => {
  const stored = new Map();
  const client = fakeGateway({ limits: storingLimits(stored) });
  await assert.rejects(
    client.limits.create({ name: "both", concurrency: { maxUnits: 1 }, breaker: { failureThreshold: 1 } }),
    /exclusive/,
  );
  await assert.rejects(
    client.limits.create({ name: "half", breaker: { failureThreshold: 1.5 } }),
    /limit\.breaker\.failureThreshold/,
  );
  await assert.rejects(
    client.limits.create({ name: "negative", breaker: { failureThreshold: 1, coolDownMs: -1 } }),
    /limit\.breaker\.coolDownMs/,
  );
  assert.equal(stored.size, 0);
});

test("submit sends a breaker key; a failure says throttled, retryAfterMs and refunded", async () => {
  const seen = [];
  const client = fakeGateway({
    tasks: {
      submitTask(req) {
        seen.push(req.task);
        return { task: create(TaskSchema, { id: "t-1", name: req.task.name, limits: req.task.limits }), created: true };
      },
      getTask() {
        const throttled = { attempt: 2, type: "RetryAfter", throttled: true, retryAfter: { seconds: 2n, nanos: 500_000_000 } };
        return {
          task: create(TaskSchema, {
            id: "t-1",
            state: TaskState.RETRYING,
            failure: throttled,
            failures: [{ attempt: 1, type: "ConnectionError", refunded: true }, throttled],
          }),
        };
      },
    },
  });
  const { task } = await client.submit("charge", [], { limits: [{ limit: "payments", key: "payments-api" }] });
  assert.deepEqual(
    seen[0].limits.map((u) => [u.limit, u.key]),
    [["payments", "payments-api"]],
  );
  assert.deepEqual(task.limits, [{ limit: "payments", key: "payments-api", units: 0 }]);
  const got = await client.get("t-1");
  assert.equal(got.failure.throttled, true);
  assert.equal(got.failure.retryAfterMs, 2500);
  assert.equal(got.failure.refunded, false);
  assert.deepEqual(
    got.failures.map((f) => [f.type, f.throttled, f.retryAfterMs, f.refunded]),
    [
      ["ConnectionError", false, undefined, true],
      ["RetryAfter", true, 2500, false],
    ],
  );
});
