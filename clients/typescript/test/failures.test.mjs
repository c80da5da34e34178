// Offline tests of client.failures (FailureService) against an in-memory Connect router:
// what each call sends, what it reads back, and what it refuses before sending.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { TaskyardClient, TaskyardError } from "../dist/index.js";
import { FailureService, RedriveState } from "../dist/gen/taskyard/v1/failure_service_pb.js";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { DeadLetterReason, TaskSchema, TaskState } from "../dist/gen/taskyard/v1/task_pb.js";
import { ErrorInfoSchema } from "../dist/gen/google/rpc/error_details_pb.js";

const FAILED_AT = new Date("2026-12-01T10:42:57Z");

/**
 * Dead letters of one group and the redrives made of them, as the gateway would keep them;
 * every listing pages one item at a time (the token is the next item's index).
 */
function fakeFailures(n) {
  const dead = Array.from({ length: n }, (_, i) => ({
    taskId: `t-${i}`,
    queue: "default",
    name: "charge",
    reason: DeadLetterReason.RETRIES_EXHAUSTED,
    groupId: "g1",
    failure: { type: "RuntimeError", message: "503 from payments", attempt: 3, failedAt: timestampFromDate(FAILED_AT), groupId: "g1" },
    labels: { tenant: "acme" },
    redrives: 0,
  }));
  const state = { dead, redrives: [], items: new Map(), filters: [], requests: [], purges: [] };
  const page = (items, token) => {
    const i = token ? Number(token) : 0;
    return { got: items.slice(i, i + 1), next: i + 1 < items.length ? String(i + 1) : "" };
  };
  const matching = (f) =>
    state.dead.filter((d) => (!f.groupId || d.groupId === f.groupId) && (!f.taskIds.length || f.taskIds.includes(d.taskId)));
  const find = (id) => {
    const r = state.redrives.find((x) => x.id === id);
    if (!r) throw new ConnectError(`no redrive ${id}`, Code.NotFound);
    return r;
  };
  const control = (id, from, to) => {
    const r = find(id);
    if (!from.includes(r.state)) throw new ConnectError(`redrive ${id} is ${RedriveState[r.state]}`, Code.FailedPrecondition);
    r.state = to;
    return { redrive: r };
  };
  const impl = {
    listFailureGroups(req) {
      state.filters.push(req.filter);
      const groups = [
        {
          groupId: "g1",
          queue: "default",
          name: "charge",
          type: "RuntimeError",
          message: "<n> from payments",
          frame: "billing:charge",
          count: BigInt(state.dead.length),
          firstSeen: timestampFromDate(FAILED_AT),
          lastSeen: timestampFromDate(new Date(FAILED_AT.getTime() + 60_000)),
          sampleTaskIds: ["t-1", "t-0"],
          sampleTraceback: "Traceback ...",
        },
        { groupId: "g2", queue: "mail", name: "send", count: 1n },
      ];
      const { got, next } = page(groups, req.pageToken);
      return { groups: got, nextPageToken: next };
    },
    listFailures(req) {
      state.filters.push(req.filter);
      const { got, next } = page(matching(req.filter), req.pageToken);
      return { failures: got, nextPageToken: next };
    },
    redrive(req) {
      state.requests.push(req);
      const matched = matching(req.filter);
      if (!req.dryRun && matched.length === 0) {
        throw new ConnectError("nothing to redrive", Code.FailedPrecondition, undefined, [
          { desc: ErrorInfoSchema, value: { reason: "NOTHING_TO_REDRIVE", domain: "taskyard.dev" } },
        ]);
      }
      const out = { matched: BigInt(matched.length), sample: matched.slice(0, 10) };
      if (req.dryRun) return out;
      const r = {
        id: `r-${state.redrives.length + 1}`,
        filter: req.filter,
        rate: req.rate,
        note: req.note,
        state: RedriveState.RUNNING,
        createdBy: "ops",
        createdAt: timestampFromDate(FAILED_AT),
        matched: BigInt(matched.length),
      };
      state.items.set(
        r.id,
        matched.map((d) => ({ taskId: d.taskId, outcome: 2, failedAttempt: 3, newAttempt: 4, at: timestampFromDate(FAILED_AT) })),
      );
      state.redrives.unshift(r);
      return { ...out, redrive: r };
    },
    getRedrive: ({ id }) => ({ redrive: find(id) }),
    listRedrives(req) {
      const { got, next } = page(state.redrives, req.pageToken);
      return { redrives: got, nextPageToken: next };
    },
    listRedriveItems(req) {
      find(req.id);
      const { got, next } = page(state.items.get(req.id), req.pageToken);
      return { items: got, nextPageToken: next };
    },
    pauseRedrive: ({ id }) => control(id, [RedriveState.RUNNING], RedriveState.PAUSED),
    resumeRedrive: ({ id }) => control(id, [RedriveState.PAUSED], RedriveState.RUNNING),
    cancelRedrive: ({ id }) => control(id, [RedriveState.RUNNING, RedriveState.PAUSED], RedriveState.CANCELLED),
    purgeDeadLetters(req) {
      state.purges.push(req);
      return { purged: BigInt(matching(req.filter).length) };
    },
  };
  const transport = createRouterTransport((router) => router.service(FailureService, impl));
  return { client: new TaskyardClient("gateway:50051", { transport }), state };
}

async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

test("failures.groups sends the filter and reads a group; allGroups follows the pages", async () => {
  const { client, state } = fakeFailures(3);
  const after = new Date(FAILED_AT.getTime() - 3_600_000);
  const filter = { queue: "default", reason: "RETRIES_EXHAUSTED", failedAfter: after };
  const page = await client.failures.groups({ filter, pageSize: 1 });
  assert.deepEqual(page.items, [
    {
      groupId: "g1",
      queue: "default",
      name: "charge",
      type: "RuntimeError",
      message: "<n> from payments",
      frame: "billing:charge",
      count: 3,
      firstSeen: FAILED_AT,
      lastSeen: new Date(FAILED_AT.getTime() + 60_000),
      sampleTaskIds: ["t-1", "t-0"],
      sampleTraceback: "Traceback ...",
    },
  ]);
  assert.equal(page.nextPageToken, "1");
  const sent = state.filters[0];
  assert.equal(sent.queue, "default");
  assert.equal(sent.reason, DeadLetterReason.RETRIES_EXHAUSTED);
  assert.equal(Number(sent.failedAfter.seconds), after.getTime() / 1000);
  assert.equal(sent.failedBefore, undefined);
  assert.equal(sent.all, false);
  const all = await collect(client.failures.allGroups({ filter, pageSize: 1 }));
  assert.deepEqual(
    all.map((g) => g.groupId),
    ["g1", "g2"],
  );
  await assert.rejects(client.failures.groups({ filter: { reason: "SOMETIMES" } }), /unknown dead letter reason/);
});

test("failures.all lists a group's dead letters with their final failure", async () => {
  const { client, state } = fakeFailures(3);
  const filter = { groupId: "g1", taskIds: ["t-0", "t-2"], labels: { tenant: "acme" } };
  const got = await collect(client.failures.all({ filter }));
  assert.deepEqual(
    got.map((d) => d.taskId),
    ["t-0", "t-2"],
  );
  const [d] = got;
  assert.equal(d.reason, "RETRIES_EXHAUSTED");
  assert.equal(d.groupId, "g1");
  assert.deepEqual(d.labels, { tenant: "acme" });
  assert.equal(d.failure.type, "RuntimeError");
  assert.equal(d.failure.attempt, 3);
  assert.equal(d.failure.groupId, "g1");
  assert.deepEqual(d.failure.failedAt, FAILED_AT);
  assert.deepEqual(state.filters[0].taskIds, ["t-0", "t-2"]);
  assert.deepEqual(state.filters[0].labels, { tenant: "acme" });
});

test("failures.redrive: a dry run counts and samples, a real run returns the redrive and its audit", async () => {
  const { client, state } = fakeFailures(3);
  const dry = await client.failures.redrive({ groupId: "g1" }, { rate: 50, dryRun: true });
  assert.equal(dry.redrive, undefined);
  assert.equal(dry.matched, 3);
  assert.deepEqual(
    dry.sample.map((d) => d.taskId),
    ["t-0", "t-1", "t-2"],
  );
  const real = await client.failures.redrive({ groupId: "g1" }, { rate: 200, note: "payments back" });
  const r = real.redrive;
  assert.equal(r.id, "r-1");
  assert.equal(r.state, "RUNNING");
  assert.equal(r.rate, 200);
  assert.equal(r.note, "payments back");
  assert.equal(r.matched, 3);
  assert.equal(r.createdBy, "ops");
  assert.deepEqual(r.createdAt, FAILED_AT);
  assert.equal(r.finishedAt, undefined);
  // The filter as the caller would have written it: only what is set.
  assert.deepEqual(r.filter, { groupId: "g1" });
  assert.deepEqual(
    state.requests.map((q) => [q.dryRun, q.rate]),
    [
      [true, 50],
      [false, 200],
    ],
  );
  assert.equal((await client.failures.getRedrive("r-1")).state, "RUNNING");
  const items = await collect(client.failures.allRedriveItems("r-1", { pageSize: 1 }));
  assert.equal(items.length, 3);
  assert.deepEqual(items[0], { taskId: "t-0", outcome: "REQUEUED", failedAttempt: 3, newAttempt: 4, at: FAILED_AT, detail: "" });
  const missing = await client.failures.getRedrive("r-404").catch((e) => e);
  assert.ok(missing instanceof TaskyardError);
  assert.equal(missing.code, "NOT_FOUND");
  const nothing = await client.failures.redrive({ groupId: "none" }, { rate: 1 }).catch((e) => e);
  assert.equal(nothing.code, "FAILED_PRECONDITION");
  assert.equal(nothing.reason, "NOTHING_TO_REDRIVE");
});

test("failures.redrive refuses a bad rate or too many ids before sending", async () => {
  const { client, state } = fakeFailures(1);
  for (const rate of [0, -1, NaN, Infinity, 10_001, "5", undefined]) {
    await assert.rejects(client.failures.redrive({ all: true }, { rate }), /rate must be more than 0/, String(rate));
  }
  const ids = Array.from({ length: 1001 }, (_, i) => `t-${i}`);
  await assert.rejects(client.failures.redrive({ taskIds: ids }, { rate: 1 }), /filter\.taskIds: at most 1000/);
  assert.equal(state.requests.length, 0);
});

test("failures: pause, resume, cancel, the redrives newest first, and purge", async () => {
  const { client, state } = fakeFailures(2);
  const first = (await client.failures.redrive({ taskIds: ["t-0"] }, { rate: 1 })).redrive;
  const second = (await client.failures.redrive({ taskIds: ["t-1"] }, { rate: 1 })).redrive;
  assert.equal((await client.failures.pauseRedrive(first.id)).state, "PAUSED");
  assert.equal((await client.failures.resumeRedrive(first.id)).state, "RUNNING");
  assert.equal((await client.failures.cancelRedrive(first.id)).state, "CANCELLED");
  const again = await client.failures.cancelRedrive(first.id).catch((e) => e);
  assert.equal(again.code, "FAILED_PRECONDITION");
  const page = await client.failures.listRedrives({ pageSize: 1 });
  assert.deepEqual(
    page.items.map((r) => r.id),
    [second.id],
  );
  assert.notEqual(page.nextPageToken, "");
  const all = await collect(client.failures.allRedrives({ pageSize: 1 }));
  assert.deepEqual(
    all.map((r) => r.id),
    [second.id, first.id],
  );
  assert.equal(await client.failures.purge({ groupId: "g1" }, { dryRun: true }), 2);
  assert.equal(state.purges[0].dryRun, true);
  assert.equal(state.purges[0].filter.groupId, "g1");
});

test("a task says its dead letter reason and the redrive that re-queued it", async () => {
  const task = create(TaskSchema, {
    id: "t1",
    state: TaskState.FAILURE,
    attempt: 2,
    deadLetterReason: DeadLetterReason.QUARANTINED,
    redriveId: "r-1",
    redrivenFromAttempt: 1,
    failures: [
      { attempt: 1, groupId: "g1", redriveId: "r-1" },
      { attempt: 2, groupId: "g1" },
    ],
  });
  const transport = createRouterTransport((router) => router.service(TaskService, { getTask: () => ({ task }) }));
  const got = await new TaskyardClient("gateway:50051", { transport }).get("t1");
  assert.equal(got.deadLetterReason, "QUARANTINED");
  assert.equal(got.redriveId, "r-1");
  assert.equal(got.redrivenFromAttempt, 1);
  assert.deepEqual(
    got.failures.map((f) => [f.groupId, f.redriveId]),
    [
      ["g1", "r-1"],
      ["g1", ""],
    ],
  );
});
