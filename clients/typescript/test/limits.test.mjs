// Offline tests of flow control: limit uses on submit, and client.limits against an
// in-memory Connect router.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { TaskyardClient, TaskyardError } from "../dist/index.js";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { LimitService } from "../dist/gen/taskyard/v1/limit_service_pb.js";
import { TaskSchema } from "../dist/gen/taskyard/v1/task_pb.js";
import { LimitSchema, LimitUsageSchema } from "../dist/gen/taskyard/v1/limit_pb.js";
import { ErrorInfoSchema } from "../dist/gen/google/rpc/error_details_pb.js";

function fakeGateway({ tasks = {}, limits = {} }) {
  const transport = createRouterTransport((router) => {
    router.service(TaskService, tasks);
    router.service(LimitService, limits);
  });
  return new TaskyardClient("gateway:50051", { transport });
}

test("submit sends limit uses and the fairness key; the task reads them back", async () => {
  const seen = [];
  const client = fakeGateway({
    tasks: {
      submitTask(req) {
        seen.push(req.task);
        const { name, limits, fairnessKey } = req.task;
        return { task: create(TaskSchema, { id: "t-1", name, limits, fairnessKey }), created: true };
      },
    },
  });
  const { task } = await client.submit("charge", [], {
    limits: [{ limit: "stripe", key: "customer:42", units: 2 }, { limit: "global" }],
    fairnessKey: "customer:42",
  });
  const sent = seen[0];
  assert.deepEqual(
    sent.limits.map((u) => [u.limit, u.key, u.units]),
    [
      ["stripe", "customer:42", 2n],
      ["global", "", 0n],
    ],
  );
  assert.equal(sent.fairnessKey, "customer:42");
  assert.deepEqual(task.limits, [
    { limit: "stripe", key: "customer:42", units: 2 },
    { limit: "global", key: "", units: 0 },
  ]);
  assert.equal(task.fairnessKey, "customer:42");
  await assert.rejects(client.submit("charge", [], { limits: [{ limit: "x", units: 1.5 }] }), /task\.limits\[0\]\.units/);
  assert.equal(seen.length, 1);
});

test("limits: create, get with usage, update, and a refused definition", async () => {
  const stored = new Map();
  const client = fakeGateway({
    limits: {
      createLimit({ limit }) {
        if (stored.has(limit.name)) throw new ConnectError("taken", Code.AlreadyExists);
        stored.set(limit.name, limit);
        return { limit };
      },
      getLimit({ name }) {
        const limit = stored.get(name);
        if (!limit) {
          throw new ConnectError(`no limit named ${name}`, Code.NotFound, undefined, [
            { desc: ErrorInfoSchema, value: { reason: "LIMIT_NOT_FOUND", domain: "taskyard.dev" } },
          ]);
        }
        const usage = { unitsInUse: 2n, waiting: 5n, keys: 1n, busiestKeys: [{ key: "customer:42", unitsInUse: 2n, waiting: 5n }] };
        return { limit: { ...limit, usage: create(LimitUsageSchema, usage) } };
      },
      updateLimit({ limit }) {
        stored.set(limit.name, limit);
        return { limit };
      },
    },
  });
  const rate = await client.limits.create({ name: "stripe", rate: { units: 100, periodMs: 1000, burst: 20 }, description: "quota" });
  assert.deepEqual(rate.rate, { units: 100, periodMs: 1000, burst: 20 });
  const wire = stored.get("stripe");
  assert.equal(wire.kind.case, "rate");
  assert.equal(wire.kind.value.period.seconds, 1n);
  assert.equal(wire.description, "quota");
  await client.limits.create({ name: "per-customer", concurrency: { maxUnits: 3 }, perKey: true });
  const got = await client.limits.get("per-customer");
  assert.deepEqual(got.concurrency, { maxUnits: 3 });
  assert.equal(got.perKey, true);
  assert.equal(got.rate, undefined);
  assert.deepEqual(got.usage, {
    unitsInUse: 2,
    admitted: 0,
    throttled: 0,
    waiting: 5,
    keys: 1,
    busiestKeys: [{ key: "customer:42", unitsInUse: 2, waiting: 5 }],
  });
  const updated = await client.limits.update({ name: "stripe", rate: { units: 50, periodMs: 60_000 } });
  assert.deepEqual(updated.rate, { units: 50, periodMs: 60_000, burst: 0 });
  const taken = await client.limits.create({ name: "stripe", concurrency: { maxUnits: 1 } }).catch((e) => e);
  assert.ok(taken instanceof TaskyardError);
  assert.equal(taken.code, "ALREADY_EXISTS");
  const missing = await client.limits.get("nope").catch((e) => e);
  assert.ok(missing instanceof TaskyardError);
  assert.equal(missing.code, "NOT_FOUND");
  assert.equal(missing.reason, "LIMIT_NOT_FOUND");
  await assert.rejects(
    client.limits.create({ name: "both", rate: { units: 1, periodMs: 1000 }, concurrency: { maxUnits: 1 } }),
    /exclusive/,
  );
  assert.equal(stored.has("both"), false);
});

test("limits.all() follows page tokens; list gives one page", async () => {
  const names = ["a", "b", "c"];
  const client = fakeGateway({
    limits: {
      listLimits({ pageToken }) {
        const i = pageToken === "" ? 0 : names.indexOf(pageToken);
        const limit = create(LimitSchema, { name: names[i], kind: { case: "concurrency", value: { maxUnits: 1n } } });
        return { limits: [limit], nextPageToken: names[i + 1] ?? "" };
      },
    },
  });
  const page = await client.limits.list({ pageSize: 1 });
  assert.deepEqual(
    page.limits.map((l) => l.name),
    ["a"],
  );
  assert.equal(page.nextPageToken, "b");
  const seen = [];
  for await (const l of client.limits.all({ pageSize: 1 })) seen.push(l.name);
  assert.deepEqual(seen, names);
});

test("limits: delete with force, key weights", async () => {
  const deletes = [];
  const weights = [];
  const client = fakeGateway({
    limits: {
      deleteLimit(req) {
        deletes.push([req.name, req.force]);
        if (!req.force) throw new ConnectError("3 tasks use it", Code.FailedPrecondition);
        return { tasksReleased: 3n };
      },
      setKeyWeight({ weight }) {
        weights.push(weight);
        return { weight };
      },
      listKeyWeights() {
        return { weights };
      },
    },
  });
  const refused = await client.limits.delete("busy").catch((e) => e);
  assert.equal(refused.code, "FAILED_PRECONDITION");
  assert.equal(await client.limits.delete("busy", { force: true }), 3);
  assert.deepEqual(deletes, [
    ["busy", false],
    ["busy", true],
  ]);
  assert.deepEqual(await client.limits.setKeyWeight("customer:42", 3), { key: "customer:42", weight: 3 });
  await assert.rejects(client.limits.setKeyWeight("k", -1), TypeError);
  assert.deepEqual(await client.limits.listKeyWeights(), [{ key: "customer:42", weight: 3 }]);
});
