// The client conformance scenarios (clients/conformance/README.md) against a live suite,
// through the package's public API only.
import { randomInt, randomUUID } from "node:crypto";
import { TaskyardClient, TaskyardError } from "@taskyard/client";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see clients/conformance/README.md)`);
  return value;
};
const target = env("TASKYARD_TARGET");
const dial = (t, token) => new TaskyardClient(t, { tls: false, token, timeoutMs: 30_000 });
const client = dial(target, env("TASKYARD_TOKEN"));
// The redrive and breaker scenarios' client (scope admin), made when one of them runs.
let adminClient;
const admin = () => (adminClient ??= dial(target, env("TASKYARD_ADMIN_TOKEN")));

class Mismatch extends Error {}
function check(ok, what) {
  if (!ok) throw new Mismatch(what);
}
const eq = (got, want, what) => check(got === want, `${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);

/** The error `promise` rejects with, checked to be a TaskyardError of `code` (and `reason`). */
async function refused(promise, code, reason) {
  try {
    await promise;
  } catch (err) {
    check(err instanceof TaskyardError, `want a TaskyardError, got ${err}`);
    eq(err.code, code, `code (${err.message})`);
    if (reason !== undefined) eq(err.reason, reason, "reason");
    return err;
  }
  throw new Mismatch(`succeeded, want ${code}`);
}

async function finished(id) {
  const { task } = await client.wait(id, { waitMs: 30_000 });
  check(task.isFinal, `task ${id} not final after 30 s (${task.state})`);
  return task;
}

/** Runs `body` with a `sleep(30)` task, cancelled at the end whatever happens. */
async function withSleeper(body) {
  const { task } = await client.submit("sleep", [30]);
  try {
    await body(task);
  } finally {
    await client.cancel(task.id).catch(() => {});
  }
}

const scenarios = {
  async submit_and_wait() {
    const { task, created } = await client.submit("add", [2, 3]);
    check(task.id !== "", "empty id");
    eq(created, true, "created");
    const done = await finished(task.id);
    eq(done.state, "SUCCESS", "state");
    eq(done.result, 5, "result");
  },

  async submit_options() {
    const { task } = await client.submit("echo", ["x"], {
      priority: "HIGH",
      queue: "default",
      labels: { suite: "conformance" },
      maxRetries: 0,
      taskTimeoutMs: 30_000,
    });
    const got = await client.get(task.id);
    eq(got.name, "echo", "name");
    eq(got.priority, "HIGH", "priority");
    eq(got.queue, "default", "queue");
    eq(got.labels.suite, "conformance", "label suite");
    eq(got.maxRetries, 0, "maxRetries");
    eq(got.taskTimeoutMs, 30_000, "taskTimeoutMs");
  },

  async batch() {
    const outcomes = await client.submitBatch([0, 1, 2, 3, 4].map((i) => ({ name: "add", args: [i, i] })));
    eq(outcomes.length, 5, "replies");
    eq(new Set(outcomes.map((o) => o.id)).size, 5, "distinct ids");
    check(outcomes.every((o) => o.created), "not all created");
    const results = [];
    for (const o of outcomes) results.push((await finished(o.id)).result);
    eq(JSON.stringify(results), JSON.stringify([0, 2, 4, 6, 8]), "results");
  },

  async get() {
    const { task } = await client.submit("add", [2, 3]);
    const got = await client.get(task.id);
    eq(got.id, task.id, "id");
    eq(got.name, "add", "name");
    eq(JSON.stringify(got.args), "[2,3]", "args");
  },

  async wait_timeout() {
    await withSleeper(async (task) => {
      const { task: now, timedOut } = await client.wait(task.id, { waitMs: 300 });
      eq(timedOut, true, "timedOut");
      eq(now.isFinal, false, "isFinal");
    });
  },

  async list_pages() {
    const marker = `conformance-${randomUUID()}`;
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await client.submit("echo", [marker])).task.id);
    for (const id of ids) eq((await finished(id)).state, "SUCCESS", `state of ${id}`);
    const filter = { name: "echo", states: ["SUCCESS"], pageSize: 2 };
    const page = await client.list(filter);
    eq(page.tasks.length, 2, "tasks on one page");
    check(page.nextPageToken !== "", "no next page token");
    const seen = new Set();
    for await (const t of client.tasks(filter)) {
      check(!seen.has(t.id), `id ${t.id} yielded twice`);
      seen.add(t.id);
    }
    check(ids.every((id) => seen.has(id)), "the iteration missed some of the five tasks");
  },

  async cancel_queued() {
    const { task } = await client.submit("add", [1, 1], { countdownMs: 3_600_000 });
    eq(task.state, "SCHEDULED", "state before");
    const outcome = await client.cancel(task.id);
    eq(outcome.cancelled, true, "cancelled");
    eq(outcome.task.state, "CANCELLED", "state after");
    eq((await client.get(task.id)).state, "CANCELLED", "state read back");
  },

  async cancel_running() {
    await withSleeper(async (task) => {
      const until = Date.now() + 15_000;
      let state = task.state;
      while (state !== "RUNNING" && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        state = (await client.get(task.id)).state;
      }
      eq(state, "RUNNING", "state before the cancel");
      const outcome = await client.cancel(task.id, { reason: "conformance", waitMs: 15_000 });
      eq(outcome.task.state, "CANCELLED", "state");
      eq(outcome.cancelled, true, "cancelled");
    });
  },

  async idempotent_resubmit() {
    const requestId = randomUUID();
    const first = await client.submit("add", [4, 4], { requestId });
    const again = await client.submit("add", [4, 4], { requestId });
    eq(again.task.id, first.task.id, "task id of the repeat");
    eq(first.created, true, "first created");
    eq(again.created, false, "repeat created");
    const { task } = await client.submit("add", [5, 5]);
    check((await client.get(task.id)).requestId !== "", "no request id made by the client");
  },

  async error_invalid_argument() {
    const one = await refused(client.submit(""), "INVALID_ARGUMENT");
    eq(one.domain, "taskyard.dev", "domain");
    check(one.violations.some((v) => v.field === "task.name"), "no violation on task.name");
    const requestId = randomUUID();
    const batch = await refused(
      client.submitBatch([{ name: "add", args: [1, 2], requestId }, { name: "" }]),
      "INVALID_ARGUMENT",
    );
    check(batch.violations.some((v) => v.field === "tasks[1].name"), "no violation on tasks[1].name");
    // Were the first spec written, its request id would now return it with created false.
    const after = await client.submit("add", [1, 2], { requestId });
    eq(after.created, true, "the refused batch's first task was created");
  },

  async error_unknown_task() {
    await refused(client.submit("no_such_task_conformance"), "INVALID_ARGUMENT", "UNKNOWN_TASK_NAME");
  },

  async error_not_found() {
    await refused(client.get(randomUUID()), "NOT_FOUND", "TASK_NOT_FOUND");
  },

  async error_already_final() {
    const { task } = await client.submit("add", [2, 3]);
    eq((await finished(task.id)).state, "SUCCESS", "state");
    await refused(client.cancel(task.id), "FAILED_PRECONDITION", "TASK_ALREADY_FINAL");
  },

  async error_unauthenticated() {
    for (const [token, reason] of [
      [undefined, "TOKEN_MISSING"],
      ["not-a-valid-token-0000", "TOKEN_INVALID"],
    ]) {
      const other = dial(target, token);
      try {
        await refused(other.get(randomUUID()), "UNAUTHENTICATED", reason);
      } finally {
        other.close();
      }
    }
  },

  async error_permission_denied() {
    const reader = dial(target, env("TASKYARD_READ_TOKEN"));
    try {
      await refused(reader.submit("add", [1, 2]), "PERMISSION_DENIED", "SCOPE_MISSING");
      const { task } = await client.submit("add", [1, 2]);
      eq((await reader.get(task.id)).id, task.id, "id read with the read-only token");
    } finally {
      reader.close();
    }
  },

  async error_resource_exhausted() {
    await refused(client.submit("echo", ["x".repeat(5 * 1024 * 1024)]), "RESOURCE_EXHAUSTED");
  },

  async error_deadline() {
    await withSleeper(async (task) => {
      await refused(client.wait(task.id, { waitMs: 10_000, timeoutMs: 300 }), "DEADLINE_EXCEEDED");
    });
  },

  async error_unavailable() {
    const closed = dial(env("TASKYARD_CLOSED_TARGET"));
    const started = Date.now();
    try {
      await refused(closed.get(randomUUID(), { timeoutMs: 10_000 }), "UNAVAILABLE");
    } finally {
      closed.close();
    }
    check(Date.now() - started < 10_000, "UNAVAILABLE took 10 s or more");
  },

  async task_failure() {
    const { task } = await client.submit("fail", ["boom-conformance"], { maxRetries: 0 });
    const done = await finished(task.id);
    eq(done.state, "FAILURE", "state");
    check(done.failure?.message.includes("boom-conformance"), `failure ${JSON.stringify(done.failure)}`);
  },

  async submit_with_limit_key() {
    const use = { limit: env("TASKYARD_LIMIT"), key: "customer:42", units: 1 };
    const { task } = await client.submit("echo", ["x"], { limits: [use], fairnessKey: "customer:42" });
    const got = await client.get(task.id);
    check(
      got.limits.some((u) => u.limit === use.limit && u.key === use.key && u.units === use.units),
      `limits ${JSON.stringify(got.limits)}, want them to hold ${JSON.stringify(use)}`,
    );
    eq(got.fairnessKey, "customer:42", "fairnessKey");
    eq((await finished(task.id)).state, "SUCCESS", "state");
  },

  async unknown_limit_refused() {
    const requestId = randomUUID();
    const err = await refused(
      client.submit("echo", ["x"], { limits: [{ limit: "no-such-limit", key: "customer:42" }], requestId }),
      "INVALID_ARGUMENT",
      "UNKNOWN_LIMIT",
    );
    check(
      err.violations.some((v) => v.field === "task.limits[0].limit" && v.reason === "UNKNOWN_LIMIT"),
      `violations ${JSON.stringify(err.violations)}, want one on task.limits[0].limit with reason UNKNOWN_LIMIT`,
    );
    // Were the refused task stored, its request id would now return it with created false.
    const after = await client.submit("echo", ["x"], { requestId });
    eq(after.created, true, "the refused submit's task was created");
  },

  async run_task() {
    const done = await client.run("add", [2, 3], { waitMs: 30_000 });
    check(done.task.id !== "", "no id");
    eq(done.created, true, "created");
    eq(done.timedOut, false, "timedOut");
    eq(done.task.state, "SUCCESS", "state");
    eq(done.task.result, 5, "result");
    const slow = await client.run("sleep", [30], { waitMs: 300 });
    try {
      check(slow.task.id !== "", "no id");
      eq(slow.timedOut, true, "timedOut");
      eq(slow.task.isFinal, false, "isFinal");
    } finally {
      await client.cancel(slow.task.id).catch(() => {});
    }
  },

  async redrive_dead_letters() {
    const failures = admin().failures;
    // Letters g-z only: a fingerprint masks numbers and hex ids, and keeps these.
    const marker = Array.from({ length: 12 }, () => "ghijklmnopqrstuvwxyz"[randomInt(20)]).join("");
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await client.submit("fail", [`conformance redrive ${marker}`], { maxRetries: 0 })).task.id);
    }
    const groups = new Set();
    for (const id of ids) {
      await finished(id);
      const task = await client.get(id);
      eq(task.state, "FAILURE", `${id} state`);
      eq(task.deadLetterReason, "RETRIES_EXHAUSTED", `${id} dead letter reason`);
      check(task.failure?.groupId, `${id}: failure ${JSON.stringify(task.failure)} has no group`);
      groups.add(task.failure.groupId);
    }
    eq(groups.size, 1, "groups of the three failures");
    const [group] = groups;
    let count;
    for await (const g of failures.allGroups({ filter: { name: "fail" } })) if (g.groupId === group) count = g.count;
    eq(count, 3, `count of group ${group} among the groups of fail`);
    const only = { groupId: group };
    const listed = [];
    for await (const d of failures.all({ filter: only })) listed.push(d.taskId);
    eq(JSON.stringify(listed.sort()), JSON.stringify([...ids].sort()), "the group's failures");
    const dry = await failures.redrive(only, { rate: 100, dryRun: true });
    eq(dry.matched, 3, "dry run matched");
    eq(dry.sample.length, 3, "dry run sample");
    eq(dry.redrive, undefined, "dry run redrive");
    const first = await client.get(ids[0]);
    check(first.state === "FAILURE" && first.attempt === 1, `after the dry run: ${first.state} attempt ${first.attempt}`);
    let redrive = (await failures.redrive(only, { rate: 100, note: marker })).redrive;
    check(
      redrive && redrive.id && redrive.matched === 3 && redrive.createdBy && redrive.note === marker,
      `redrive ${JSON.stringify(redrive)}`,
    );
    const deadline = Date.now() + 30_000;
    while (redrive.state !== "DONE") {
      check(Date.now() < deadline, `redrive ${redrive.id} is ${redrive.state} after 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      redrive = await failures.getRedrive(redrive.id);
    }
    check(
      redrive.requeued === 3 && redrive.skipped === 0 && redrive.finishedAt instanceof Date,
      `done redrive ${JSON.stringify(redrive)}`,
    );
    const page = await failures.listRedrives();
    check(page.items.some((r) => r.id === redrive.id), `redrive ${redrive.id} is not on the first page of redrives`);
    const items = [];
    for await (const item of failures.allRedriveItems(redrive.id)) {
      check(
        item.outcome === "REQUEUED" && item.failedAttempt === 1 && item.newAttempt === 2,
        `item ${JSON.stringify(item)}, want REQUEUED from attempt 1 to 2`,
      );
      items.push(item.taskId);
    }
    eq(JSON.stringify(items.sort()), JSON.stringify([...ids].sort()), "the redrive's items");
    for (const id of ids) {
      const again = await finished(id);
      check(
        again.state === "FAILURE" && again.attempt === 2 && again.redriveId === redrive.id && again.redrivenFromAttempt === 1,
        `${id} did not run again from the redrive: ${again.state} attempt ${again.attempt} ` +
          `redrive ${JSON.stringify(again.redriveId)} from attempt ${again.redrivenFromAttempt}`,
      );
    }
  },

  async breaker_limit() {
    const limits = admin().limits;
    // The four runners share one suite: each makes a breaker of its own.
    const name = `conformance-breaker-${randomUUID().slice(0, 8)}`;
    const breaker = { failureThreshold: 5, windowMs: 30_000, minAttempts: 8, coolDownMs: 10_000, halfOpenProbes: 2 };
    await limits.create({ name, breaker, perKey: true });
    const got = await limits.get(name);
    eq(JSON.stringify(got.breaker), JSON.stringify(breaker), "the breaker read back");
    eq(got.perKey, true, "perKey");
    check(got.rate === undefined && got.concurrency === undefined, `a breaker with another kind: ${JSON.stringify(got)}`);
    const { task, created } = await client.submit("echo", ["x"], { limits: [{ limit: name, key: "payments-api" }] });
    eq(created, true, "created");
    const stored = await client.get(task.id);
    check(
      stored.limits.some((u) => u.limit === name && u.key === "payments-api"),
      `limits ${JSON.stringify(stored.limits)}, want them to hold ${name} with key payments-api`,
    );
    eq((await finished(task.id)).state, "SUCCESS", "state");
    const bad = [
      ["limit.breaker.failure_threshold", { failureThreshold: 0 }],
      ["limit.breaker.half_open_probes", { failureThreshold: 5, halfOpenProbes: 1001 }],
    ];
    for (const [field, numbers] of bad) {
      const refusedName = `${name}-refused`;
      const err = await refused(limits.create({ name: refusedName, breaker: numbers }), "INVALID_ARGUMENT");
      check(
        err.violations.some((v) => v.field === field),
        `violations ${JSON.stringify(err.violations)}, want one on ${field}`,
      );
      await refused(limits.get(refusedName), "NOT_FOUND", "LIMIT_NOT_FOUND");
    }
  },

  async tenant_isolation() {
    const [a, b] = [env("TASKYARD_TENANT_A"), env("TASKYARD_TENANT_B")];
    const ca = dial(target, env("TASKYARD_TENANT_A_TOKEN"));
    const cb = dial(target, env("TASKYARD_TENANT_B_TOKEN"));
    const aAsB = new TaskyardClient(target, { tls: false, token: env("TASKYARD_TENANT_A_TOKEN"), tenant: b });
    try {
      const { task: mine } = await ca.submit("add", [2, 3]);
      const done = (await ca.wait(mine.id, { waitMs: 30_000 })).task;
      check(done.state === "SUCCESS" && done.tenant === a, `A's task: ${done.state} of ${JSON.stringify(done.tenant)}`);
      const { task: theirs } = await cb.submit("add", [4, 4]);
      check((await cb.wait(theirs.id, { waitMs: 30_000 })).task.isFinal, `B's task ${theirs.id} not final after 30 s`);
      // What a caller learns: code, reason and message, the id asked for replaced.
      const answer = async (call, id) => {
        const err = await refused(call(id), "NOT_FOUND", "TASK_NOT_FOUND");
        return JSON.stringify([err.code, err.reason, err.message.replaceAll(id, "<id>")]);
      };
      const calls = {
        "A's get": (id) => ca.get(id),
        "A's cancel": (id) => ca.cancel(id),
        "A's wait": (id) => ca.wait(id, { waitMs: 1_000 }),
      };
      for (const [what, call] of Object.entries(calls)) {
        eq(await answer(call, theirs.id), await answer(call, randomUUID()), `${what} of B's task against a missing id`);
      }
      eq(await answer((id) => cb.get(id), mine.id), await answer((id) => cb.get(id), randomUUID()), "B's get of A's task");
      const listed = (await ca.list({ pageSize: 100 })).tasks;
      check(listed.some((t) => t.id === mine.id), `A's list does not hold ${mine.id}`);
      check(listed.every((t) => t.id !== theirs.id && t.tenant === a), `A's list holds tenants ${[...new Set(listed.map((t) => t.tenant))]}`);
      await ca.submit("add", [1, 1]);
      const { nextPageToken } = await ca.list({ pageSize: 1 });
      check(nextPageToken !== "", "A's first page of 1 task has no next page token");
      const borrowed = (await cb.list({ pageSize: 100, pageToken: nextPageToken })).tasks;
      check(
        borrowed.every((t) => t.id !== mine.id && t.tenant === b),
        `B's list from A's page token holds tenants ${[...new Set(borrowed.map((t) => t.tenant))]}`,
      );
      await refused(ca.tenants.create({ name: `conformance-${randomUUID().slice(0, 8)}` }), "PERMISSION_DENIED");
      await refused(aAsB.get(theirs.id), "PERMISSION_DENIED", "OPERATOR_ONLY");
      eq((await admin().get(mine.id)).tenant, a, "the operator's view of A's task");
      eq((await admin().get(theirs.id)).tenant, b, "the operator's view of B's task");
    } finally {
      await Promise.all([ca.close(), cb.close(), aAsB.close()]);
    }

    const tenants = admin().tenants;
    const name = `conformance-${randomUUID().slice(0, 8)}`;
    const made = await tenants.create({ name, maxConcurrency: 5, weight: 2 });
    eq(JSON.stringify([made.name, made.state, made.maxConcurrency, made.weight]), JSON.stringify([name, "ACTIVE", 5, 2]), "created");
    const got = await tenants.get(name);
    eq(JSON.stringify([got.maxConcurrency, got.weight]), JSON.stringify([5, 2]), "got");
    let listed = false;
    for await (const t of tenants.all()) listed ||= t.name === name;
    check(listed, `${name} not among the tenants listed`);
    const gone = await tenants.suspend(name, { reason: "conformance" });
    check(gone.state === "SUSPENDED" && gone.suspendedAt !== undefined, `suspended ${JSON.stringify(gone)}`);
    const acting = new TaskyardClient(target, { tls: false, token: env("TASKYARD_ADMIN_TOKEN"), tenant: name });
    try {
      await refused(acting.submit("add", [1, 2]), "FAILED_PRECONDITION", "TENANT_SUSPENDED");
      eq((await tenants.resume(name)).state, "ACTIVE", "resumed");
      const { task } = await acting.submit("add", [1, 2]);
      const done = (await acting.wait(task.id, { waitMs: 30_000 })).task;
      eq(JSON.stringify([done.state, done.result, done.tenant]), JSON.stringify(["SUCCESS", 3, name]), `task ${task.id}`);
    } finally {
      await acting.close();
    }
  },
};

let passed = 0;
const total = Object.keys(scenarios).length;
for (const [id, run] of Object.entries(scenarios)) {
  try {
    await run();
    passed++;
    console.log(`PASS ${id}`);
  } catch (err) {
    const what = err instanceof Mismatch ? err.message : `${err?.name ?? "Error"}: ${err?.message ?? err}`;
    console.log(`FAIL ${id}: ${what.replace(/\s+/g, " ")}`);
  }
}
client.close();
adminClient?.close();
console.log(`typescript conformance: ${passed}/${total} passed`);
process.exitCode = passed === total ? 0 : 1;
