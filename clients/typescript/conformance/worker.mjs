// The TypeScript worker of the worker conformance suite (clients/conformance/workers.md):
// it registers the suite's task set and runs until SIGTERM, which drains it.
//
// TASKYARD_TARGET (host:port, plaintext), TASKYARD_TOKEN, TASKYARD_TASK_PREFIX and
// TASKYARD_WORKER_SLOTS (default 4). Once welcomed it prints "ready <worker_id>" on
// stdout. A worker the gateway refuses prints the error, with its gRPC status name, on
// stderr and exits 1.
import { setTimeout as sleep } from "node:timers/promises";
import { FatalError, TaskyardWorker } from "@taskyard/client";

function fail(message) {
  process.stderr.write(`conformance worker: ${message}\n`);
  process.exit(1);
}

const target = process.env.TASKYARD_TARGET || fail("TASKYARD_TARGET is not set");
const prefix = process.env.TASKYARD_TASK_PREFIX ?? "";
const slotsText = process.env.TASKYARD_WORKER_SLOTS || "4";
const slots = Number(slotsText);
if (!Number.isInteger(slots)) fail(`TASKYARD_WORKER_SLOTS=${JSON.stringify(slotsText)} is not a whole number`);

/** A failure of the suite's type `type` (the task's record shows the error's name). */
class Typed extends Error {
  constructor(type, message) {
    super(message);
    this.name = type;
  }
}

/** The task's first argument, a number of seconds, as milliseconds. */
function seconds(task) {
  const s = task.args[0];
  if (typeof s !== "number" || !(s >= 0)) throw new FatalError(`want a number of seconds >= 0, got ${JSON.stringify(s)}`);
  return s * 1000;
}

const functions = {
  echo: (task) => {
    if (task.args.length !== 1) throw new FatalError(`echo takes 1 argument, got ${task.args.length}`);
    return task.args[0];
  },
  flaky: (task) => {
    if (task.attempt < task.args[0]) throw new Typed("Flaky", `attempt ${task.attempt}`);
    return task.attempt;
  },
  fatal: (task) => {
    throw new FatalError(String(task.args[0]), { type: "Fatal" });
  },
  // Stops early when its signal aborts (a cancel, a revoke, its timeout): rejects with the reason.
  sleep: async (task) => {
    await sleep(seconds(task), undefined, { signal: task.signal }).catch((err) => {
      throw task.signal.aborted ? task.signal.reason : err;
    });
    return task.args[0];
  },
  // Ignores its signal, on purpose: its cancel becomes a revoke, its outcome a late one.
  stubborn: async (task) => {
    await sleep(seconds(task));
    return "done";
  },
  chatty: (task) => {
    for (const line of ["one", "two", "three"]) task.log("info", line);
    task.progress(0.5, "half");
    return "ok";
  },
  parent: (task) => {
    if (task.args.length !== 1) throw new FatalError(`parent takes 1 argument, got ${task.args.length}`);
    return task.submitChild(`${prefix}echo`, [task.args[0]]);
  },
};

let worker;
try {
  worker = new TaskyardWorker(target, { tls: false, token: process.env.TASKYARD_TOKEN || undefined, slots });
  for (const [name, fn] of Object.entries(functions)) worker.register(prefix + name, fn);
} catch (err) {
  fail(err.message);
}
worker.onReady((workerId) => process.stdout.write(`ready ${workerId}\n`));
worker.handleSignals();
try {
  await worker.run();
} catch (err) {
  // A TaskyardError's message starts with its status name: "UNAUTHENTICATED: ...".
  fail(err.message);
}
