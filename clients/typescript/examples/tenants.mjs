// Makes a tenant with an operator's token, runs add(2, 3) as that tenant and reads the
// tenant back: the README's Tenants section, run.
//   node clients/typescript/examples/tenants.mjs acme
// TASKYARD_TARGET (default localhost:50051) and TASKYARD_TOKEN (an operator's: no tenant= in
// the gateway's tokens file); a loopback target is reached in plaintext.
import { TaskyardClient, isLoopback } from "@taskyard/client";

const name = process.argv[2];
if (!name) {
  console.error("usage: tenants.mjs NAME");
  process.exit(2);
}
const target = process.env.TASKYARD_TARGET ?? "localhost:50051";
const host = target.slice(0, target.lastIndexOf(":"));
const options = { token: process.env.TASKYARD_TOKEN, tls: isLoopback(host) ? false : {} };
const client = new TaskyardClient(target, options);
try {
  // client: an operator's token's, made with target and options.
  await client.tenants.create({ name, maxConcurrency: 50, rate: { units: 100, periodMs: 1000 }, weight: 2 });
  for await (const t of client.tenants.all()) console.log("listed", t.name, t.state);
  // While suspended, its submissions fail FAILED_PRECONDITION, reason TENANT_SUSPENDED.
  const suspended = await client.tenants.suspend(name, { reason: "invoice overdue" });
  console.log("suspended", suspended.name, suspended.state);
  const resumed = await client.tenants.resume(name);
  console.log("resumed", resumed.name, resumed.state);

  // The operator's token acting as the tenant: every call is the tenant's.
  const as = new TaskyardClient(target, { ...options, tenant: name });
  try {
    const { task } = await as.submit("add", [2, 3]);
    const { task: done } = await as.wait(task.id, { waitMs: 30_000 });
    if (done.state !== "SUCCESS") throw new Error(`add ended ${done.state}: ${done.failure?.message}`);
    console.log("add(2, 3) ->", done.result, "as", done.tenant);
  } finally {
    await as.close();
  }

  const got = await client.tenants.get(name);
  console.log("got", got.name, got.state, "max concurrency", got.maxConcurrency, "weight", got.weight);
} finally {
  await client.close();
}
