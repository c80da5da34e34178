// A worker running greet(name) for a Taskyard suite until SIGTERM or Ctrl-C, which drain
// it: the running greetings finish and report, then it exits.
// TASKYARD_TARGET (default localhost:50051), TASKYARD_TOKEN (a token with the `work` scope).
import { FatalError, TaskyardWorker, isLoopback } from "@taskyard/client";

const target = process.env.TASKYARD_TARGET ?? "localhost:50051";
const host = target.slice(0, target.lastIndexOf(":"));
const worker = new TaskyardWorker(target, {
  token: process.env.TASKYARD_TOKEN || undefined,
  tls: isLoopback(host) ? false : {},
  slots: 8,
});
worker.register(
  "greet",
  async (task) => {
    const [name] = task.args;
    if (typeof name !== "string") throw new FatalError(`greet takes a name, got ${JSON.stringify(name)}`);
    task.log("info", `greeting ${name} (attempt ${task.attempt})`);
    return `Hello, ${name}!`;
  },
  { timeoutMs: 10_000, maxRetries: 3 },
);
worker.onReady((workerId) => console.log(`worker ${workerId} ready`));
worker.handleSignals();
await worker.run();
