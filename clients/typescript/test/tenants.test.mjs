// Offline tests of tenants: client.tenants against an in-memory Connect router, the tenant
// option on a real local HTTP/2 server, and a task's tenant.
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import { once } from "node:events";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createTaskyardTransport, TaskyardClient, TaskyardError } from "../dist/index.js";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { TaskSchema } from "../dist/gen/taskyard/v1/task_pb.js";
import { TenantService, TenantSchema, TenantState } from "../dist/gen/taskyard/v1/tenant_service_pb.js";

function fakeTenants() {
  const stored = new Map();
  const sent = [];
  const keep = (tenant, state = TenantState.ACTIVE) => {
    const t = create(TenantSchema, { ...tenant, state, createdAt: timestampFromMs(1_800_000_000_000) });
    stored.set(t.name, t);
    return t;
  };
  const transport = createRouterTransport((router) =>
    router.service(TenantService, {
      createTenant({ tenant }) {
        sent.push(tenant);
        if (stored.has(tenant.name)) throw new ConnectError("taken", Code.AlreadyExists);
        return { tenant: keep(tenant) };
      },
      getTenant({ name }) {
        if (!stored.has(name)) throw new ConnectError(`tenant ${name} not found`, Code.NotFound);
        return { tenant: stored.get(name) };
      },
      listTenants({ pageToken }) {
        return pageToken === ""
          ? { tenants: [create(TenantSchema, { name: "a" })], nextPageToken: "after-a" }
          : { tenants: [create(TenantSchema, { name: "b" })], nextPageToken: "" };
      },
      updateTenant({ tenant }) {
        sent.push(tenant);
        return { tenant: keep(tenant) };
      },
      suspendTenant(req) {
        sent.push(req);
        const t = keep(stored.get(req.name), TenantState.SUSPENDED);
        t.suspendedAt = timestampFromMs(1_800_000_100_000);
        return { tenant: t };
      },
      resumeTenant({ name }) {
        return { tenant: keep({ ...stored.get(name), suspendedAt: undefined }) };
      },
    }),
  );
  return { client: new TaskyardClient("gateway:50051", { transport }), sent };
}

test("tenants: create with a quota, get, update, suspend and resume", async () => {
  const { client, sent } = fakeTenants();
  const made = await client.tenants.create({
    name: "acme",
    maxConcurrency: 50,
    rate: { units: 100, periodMs: 1000, burst: 20 },
    weight: 2,
    description: "the acme team",
  });
  const wire = sent[0];
  assert.deepEqual(
    [wire.name, wire.quota.maxConcurrency, wire.quota.rate.units, wire.quota.rate.burst, wire.weight],
    ["acme", 50n, 100n, 20n, 2],
  );
  assert.deepEqual(made, {
    name: "acme",
    state: "ACTIVE",
    maxConcurrency: 50,
    rate: { units: 100, periodMs: 1000, burst: 20 },
    weight: 2,
    description: "the acme team",
    createdAt: new Date(1_800_000_000_000),
    updatedAt: undefined,
    suspendedAt: undefined,
  });
  await assert.rejects(client.tenants.create({ name: "acme" }), (e) => e instanceof TaskyardError && e.code === "ALREADY_EXISTS");
  const updated = await client.tenants.update({ name: "acme", maxConcurrency: 9 });
  // The whole definition: what is left out is reset.
  assert.deepEqual([updated.maxConcurrency, updated.rate, updated.weight], [9, undefined, 0]);
  const gone = await client.tenants.suspend("acme", { reason: "invoice overdue" });
  assert.equal(sent.at(-1).reason, "invoice overdue");
  assert.deepEqual([gone.state, gone.suspendedAt], ["SUSPENDED", new Date(1_800_000_100_000)]);
  const back = await client.tenants.resume("acme");
  assert.deepEqual([back.state, back.suspendedAt], ["ACTIVE", undefined]);
  await assert.rejects(client.tenants.get("globex"), (e) => e.code === "NOT_FOUND");
  await assert.rejects(client.tenants.create({ name: "x", maxConcurrency: 1.5 }), /tenant\.quota\.maxConcurrency/);
});

test("tenants: all() follows the page tokens", async () => {
  const { client } = fakeTenants();
  const names = [];
  for await (const t of client.tenants.all()) names.push(t.name);
  assert.deepEqual(names, ["a", "b"]);
});

test("the tenant option sends taskyard-tenant on every call; a bad name is refused at once", async (t) => {
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(TaskService, { getTask: (req) => ({ task: create(TaskSchema, { id: req.id, tenant: "acme" }) }) }),
    }),
  );
  const headers = [];
  server.on("stream", (_stream, h) => headers.push(h));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => new Promise((r) => server.close(r)));
  const target = `127.0.0.1:${server.address().port}`;
  const acting = new TaskyardClient(target, { tls: false, tenant: "acme" });
  assert.equal((await acting.get("t-1")).tenant, "acme");
  await acting.close();
  const plain = new TaskyardClient(target, { tls: false });
  await plain.get("t-2");
  await plain.close();
  assert.deepEqual(
    headers.map((h) => h["taskyard-tenant"]),
    ["acme", undefined],
  );
  for (const bad of ["Acme", "a/b", "x".repeat(65)]) {
    assert.throws(() => createTaskyardTransport(target, { tls: false, tenant: bad }), /tenant must be 1 to 64 characters of \[a-z0-9-\]/);
  }
});
