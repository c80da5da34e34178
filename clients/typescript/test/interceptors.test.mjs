// The interceptors alone, over an in-memory router: token, retries, trace context.
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { test } from "node:test";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import * as otel from "@opentelemetry/api";
import { TaskService } from "../dist/gen/taskyard/v1/task_service_pb.js";
import { TaskSchema } from "../dist/gen/taskyard/v1/task_pb.js";
import { bearerToken, RETRIED_METHODS, retryUnavailable } from "../dist/interceptors.js";
import { traceContext } from "../dist/trace.js";

function rpc(impl, interceptors) {
  return createClient(
    TaskService,
    createRouterTransport(({ service }) => service(TaskService, impl), { transport: { interceptors } }),
  );
}

test("the token goes out as a bearer authorization header", async () => {
  let header;
  const client = rpc(
    { getTask: (req, ctx) => ((header = ctx.requestHeader.get("authorization")), { task: create(TaskSchema, {}) }) },
    [bearerToken("s3cret")],
  );
  await client.getTask({ id: "x" });
  assert.equal(header, "Bearer s3cret");
});

test("UNAVAILABLE is retried with the same request", async () => {
  const seen = [];
  const client = rpc(
    {
      submitTask(req) {
        seen.push(req.task.requestId);
        if (seen.length < 3) throw new ConnectError("down", Code.Unavailable);
        return { task: create(TaskSchema, { id: "t" }), created: true };
      },
    },
    [retryUnavailable(4)],
  );
  const res = await client.submitTask({ task: { name: "add", requestId: "r-1" } });
  assert.equal(res.task.id, "t");
  assert.deepEqual(seen, ["r-1", "r-1", "r-1"]);
});

test("retries stop after maxAttempts and never touch other codes", async () => {
  let calls = 0;
  const client = rpc(
    {
      getTask(req) {
        calls++;
        throw new ConnectError("x", req.id === "gone" ? Code.NotFound : Code.Unavailable);
      },
    },
    [retryUnavailable(2)],
  );
  await assert.rejects(client.getTask({ id: "down" }), (e) => e.code === Code.Unavailable);
  assert.equal(calls, 2);
  calls = 0;
  await assert.rejects(client.getTask({ id: "gone" }), (e) => e.code === Code.NotFound);
  assert.equal(calls, 1);
});

test("CancelTask is not retried: a repeat of a committed cancel would fail", async () => {
  let calls = 0;
  const client = rpc(
    {
      cancelTask() {
        calls++;
        throw new ConnectError("lost", Code.Unavailable);
      },
    },
    [retryUnavailable(4)],
  );
  await assert.rejects(client.cancelTask({ id: "t" }), (e) => e.code === Code.Unavailable);
  assert.equal(calls, 1);
});

test("the retried methods are the reads and the submits", () => {
  assert.deepEqual(
    [...RETRIED_METHODS].map((m) => m.replace("taskyard.v1.", "")),
    [
      "TaskService/SubmitTask",
      "TaskService/BatchSubmitTasks",
      "TaskService/RunTask",
      "TaskService/GetTask",
      "TaskService/WaitTask",
      "TaskService/ListTasks",
      "TaskService/GetTaskTree",
      "TaskService/ExplainTask",
      "TaskService/GetTaskLogs",
      "TaskService/StreamTaskLogs",
      "QueueService/GetQueueStatus",
      "QueueService/ListServers",
      "ScheduleService/GetSchedule",
      "ScheduleService/ListSchedules",
      "LimitService/GetLimit",
      "LimitService/ListLimits",
      "LimitService/ListKeyWeights",
      "FailureService/ListFailureGroups",
      "FailureService/ListFailures",
      "FailureService/GetRedrive",
      "FailureService/ListRedrives",
      "FailureService/ListRedriveItems",
      "TenantService/GetTenant",
      "TenantService/ListTenants",
    ],
  );
});

/** The interceptor alone, with the request Connect's gRPC transport would hand it. */
function unaryRequest(grpcTimeout, signal = new AbortController().signal) {
  return {
    stream: false,
    service: { typeName: "taskyard.v1.TaskService" },
    method: { name: "GetTask" },
    header: new Headers({ "grpc-timeout": grpcTimeout }),
    signal,
    message: {},
  };
}

test("a retry sends the time left as grpc-timeout", async () => {
  const timeouts = [];
  const next = async (req) => {
    timeouts.push(req.header.get("grpc-timeout"));
    if (timeouts.length < 2) throw new ConnectError("down", Code.Unavailable);
    return { stream: false, message: {} };
  };
  await retryUnavailable(4)(next)(unaryRequest("5000m"));
  assert.equal(timeouts[0], "5000m");
  const left = Number(/^(\d+)m$/.exec(timeouts[1])[1]);
  assert.ok(left < 4960 && left > 4000, `second attempt sent ${timeouts[1]}`);
});

test("a deadline that passes during the backoff is DEADLINE_EXCEEDED", async () => {
  const next = async () => {
    throw new ConnectError("down", Code.Unavailable);
  };
  await assert.rejects(retryUnavailable(4)(next)(unaryRequest("1m")), (e) => e.code === Code.DeadlineExceeded);
  // Connect's own deadline signal, firing while the interceptor sleeps.
  const ac = new AbortController();
  setTimeout(() => ac.abort(new ConnectError("the operation timed out", Code.DeadlineExceeded)), 20);
  await assert.rejects(
    retryUnavailable(4)(next)(unaryRequest("20m", ac.signal)),
    (e) => e.code === Code.DeadlineExceeded,
  );
});

class TestContextManager {
  #als = new AsyncLocalStorage();
  active = () => this.#als.getStore() ?? otel.ROOT_CONTEXT;
  with = (ctx, fn, thisArg, ...args) => this.#als.run(ctx, () => fn.call(thisArg, ...args));
  bind = (_ctx, target) => target;
  enable = () => this;
  disable = () => this;
}

test("traceparent and tracestate follow the active span, and only it", async () => {
  otel.context.setGlobalContextManager(new TestContextManager());
  const headers = [];
  const client = rpc(
    {
      getTask(_req, ctx) {
        headers.push([ctx.requestHeader.get("traceparent"), ctx.requestHeader.get("tracestate")]);
        return { task: create(TaskSchema, {}) };
      },
    },
    [traceContext],
  );
  const span = {
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spanId: "b7ad6b7169203331",
    traceFlags: otel.TraceFlags.SAMPLED,
    traceState: { serialize: () => "vendor=1" },
  };
  await otel.context.with(otel.trace.setSpanContext(otel.ROOT_CONTEXT, span), () => client.getTask({ id: "x" }));
  await client.getTask({ id: "y" });
  assert.deepEqual(headers, [
    ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=1"],
    [null, null],
  ]);
  otel.context.disable();
});
