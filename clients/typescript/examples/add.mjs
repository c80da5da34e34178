// add(2, 3) on a Taskyard gateway: prints 5.
// TASKYARD_TARGET (default localhost:50051), TASKYARD_TOKEN if the gateway wants one.
import { TaskyardClient, isLoopback } from "@taskyard/client";

const target = process.env.TASKYARD_TARGET ?? "localhost:50051";
const host = target.slice(0, target.lastIndexOf(":"));
const client = new TaskyardClient(target, {
  token: process.env.TASKYARD_TOKEN || undefined,
  tls: isLoopback(host) ? false : {},
});
try {
  const { task } = await client.submit("add", [2, 3]);
  const { task: done } = await client.wait(task.id, { waitMs: 30_000 });
  if (done.state !== "SUCCESS") throw new Error(`add ended ${done.state}: ${done.failure?.message}`);
  console.log(done.result);
} finally {
  await client.close();
}
