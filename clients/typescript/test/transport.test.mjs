// The client's HTTP/2 transport against a local Connect server (loopback, no gateway):
// other services over the same connection, and a close that ends it without an error.
import assert from "node:assert/strict";
import * as http2 from "node:http2";
import { once } from "node:events";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import {
  createClient,
  createTaskyardTransport,
  EventService,
  QueueService,
  TaskService,
  TaskyardClient,
  TaskyardError,
} from "../dist/index.js";
import { TaskSchema } from "../dist/gen/taskyard/v1/task_pb.js";

/**
 * A gRPC server on a free loopback port. `goaways` gets the error code of every GOAWAY a
 * client sends; `sessionClosed` resolves once the server saw a client's connection end.
 */
async function localGateway(routes) {
  const server = http2.createServer(connectNodeAdapter({ routes }));
  const goaways = [];
  const headers = [];
  let closedOne;
  const sessionClosed = new Promise((resolve) => (closedOne = resolve));
  server.on("session", (session) => {
    session.on("goaway", (code) => goaways.push(code));
    session.on("close", () => closedOne());
  });
  server.on("stream", (_stream, h) => headers.push(h));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const target = `127.0.0.1:${server.address().port}`;
  return { target, goaways, headers, sessionClosed, stop: () => new Promise((r) => server.close(r)) };
}

/** Node says GOAWAY once on close and once more as the session ends: NO_ERROR both times. */
function assertGracefulGoaways(codes) {
  assert.ok(codes.length > 0, "the client said no GOAWAY");
  assert.deepEqual(new Set(codes), new Set([http2.constants.NGHTTP2_NO_ERROR]), `GOAWAY codes: ${codes}`);
}

test("another service is called over the client's transport, with its token and deadline", async (t) => {
  const gw = await localGateway((router) => {
    router.service(TaskService, { getTask: (req) => ({ task: create(TaskSchema, { id: req.id }) }) });
    router.service(QueueService, { getQueueStatus: () => ({ queues: [{ name: "reports", queued: 3n }] }) });
  });
  t.after(gw.stop);
  const client = new TaskyardClient(gw.target, { tls: false, token: "secret", timeoutMs: 7_000 });
  const queues = createClient(QueueService, client.transport);
  const status = await queues.getQueueStatus({});
  assert.deepEqual(status.queues.map((q) => [q.name, q.queued]), [["reports", 3n]]);
  assert.equal((await client.get("t-1")).id, "t-1");
  await client.close();
  const [first, second] = gw.headers;
  assert.equal(first[":path"], "/taskyard.v1.QueueService/GetQueueStatus");
  assert.equal(first.authorization, "Bearer secret");
  assert.match(first["grpc-timeout"], /^\d+m$/);
  assert.ok(Number(first["grpc-timeout"].slice(0, -1)) <= 7_000);
  assert.equal(second[":path"], "/taskyard.v1.TaskService/GetTask");
});

test("close ends the connection with GOAWAY NO_ERROR, not an error the server logs", async (t) => {
  const gw = await localGateway((router) =>
    router.service(TaskService, { getTask: (req) => ({ task: create(TaskSchema, { id: req.id }) }) }),
  );
  t.after(gw.stop);
  const client = new TaskyardClient(gw.target, { tls: false });
  await client.get("t-1");
  await client.close();
  await gw.sessionClosed;
  assertGracefulGoaways(gw.goaways);
  const err = await client.get("t-1").catch((e) => e);
  assert.ok(err instanceof TaskyardError);
  assert.equal(err.code, "CANCELLED");
});

test("close cancels a call still running, then closes gracefully", async (t) => {
  let arrived;
  const waiting = new Promise((resolve) => (arrived = resolve));
  const gw = await localGateway((router) =>
    router.service(TaskService, {
      async waitTask(_req, ctx) {
        arrived();
        await once(ctx.signal, "abort");
        throw ctx.signal.reason;
      },
    }),
  );
  t.after(gw.stop);
  const client = new TaskyardClient(gw.target, { tls: false });
  const wait = client.wait("t-1", { waitMs: 60_000 }).catch((e) => e);
  await waiting;
  await client.close();
  const err = await wait;
  assert.ok(err instanceof TaskyardError);
  assert.equal(err.code, "CANCELLED");
  await gw.sessionClosed;
  assertGracefulGoaways(gw.goaways);
});

test("close ends a watch still streaming; a stream gets no default deadline", async (t) => {
  const gw = await localGateway((router) =>
    router.service(EventService, {
      async *watchEvents(_req, ctx) {
        yield { cursor: "c-1", events: [{ cursor: "c-1", type: "task.queued" }] };
        await once(ctx.signal, "abort");
      },
    }),
  );
  t.after(gw.stop);
  const client = new TaskyardClient(gw.target, { tls: false, timeoutMs: 5_000 });
  const events = createClient(EventService, client.transport);
  const seen = [];
  const watching = (async () => {
    for await (const res of events.watchEvents({})) {
      seen.push(res.cursor);
      if (seen.length === 1) await client.close();
    }
  })().catch((e) => e);
  const err = await watching;
  assert.deepEqual(seen, ["c-1"]);
  assert.equal(err.code, Code.Canceled);
  await gw.sessionClosed;
  assertGracefulGoaways(gw.goaways);
  assert.equal(gw.headers[0]["grpc-timeout"], undefined);
});

test("a transport of one's own is shared, and closing the client leaves it open", async (t) => {
  const gw = await localGateway((router) =>
    router.service(TaskService, { getTask: (req) => ({ task: create(TaskSchema, { id: req.id }) }) }),
  );
  t.after(gw.stop);
  const transport = createTaskyardTransport(gw.target, { tls: false });
  const client = new TaskyardClient(gw.target, { transport });
  assert.equal(client.transport, transport);
  await client.get("a");
  await client.close();
  await assert.rejects(client.get("b"), /closed/);
  const tasks = createClient(TaskService, transport);
  assert.equal((await tasks.getTask({ id: "c" })).task.id, "c");
  await transport.close();
  await gw.sessionClosed;
  assertGracefulGoaways(gw.goaways);
  await assert.rejects(tasks.getTask({ id: "d" }), /closed/);
});

test("the transport checks its target and will not send a token in clear", () => {
  assert.throws(() => createTaskyardTransport("gateway.example.com:50051", { tls: false, token: "t" }), /in clear/);
  assert.throws(() => createTaskyardTransport("no-port"), /host:port/);
  assert.throws(() => createTaskyardTransport("127.0.0.1:1", { timeoutMs: -1 }), TypeError);
});
