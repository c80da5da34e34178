/**
 * An attempt's span: "process <task name>" (kind CONSUMER), a child of the task's own
 * trace context (Attempt.trace_headers), so the worker's work and the children it submits
 * join the task's trace. Only when @opentelemetry/api is installed (an optional peer).
 */
import type { Attempt } from "./gen/taskyard/worker/v1/worker_service_pb.js";
import { otel } from "./trace.js";

/** The library's version, as Hello.sdk and the tracer report it (package.json's, checked by a test). */
export const SDK_VERSION = "0.1.0";

type OtelApi = NonNullable<Awaited<ReturnType<typeof otel>>>;
type Context = ReturnType<OtelApi["context"]["active"]>;

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The task's context: through the registered propagators, else read as W3C traceparent. */
function parentContext(api: OtelApi, headers: Readonly<Record<string, string>>): Context {
  const extracted = api.propagation.extract(api.ROOT_CONTEXT, headers);
  if (api.trace.getSpanContext(extracted)) return extracted;
  // The API alone registers no propagator: the task's traceparent still deserves a parent.
  const m = TRACEPARENT.exec(headers["traceparent"] ?? "");
  if (!m || /^0+$/.test(m[1] as string) || /^0+$/.test(m[2] as string)) return extracted;
  const state = headers["tracestate"];
  return api.trace.setSpanContext(extracted, {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
    traceState: state && api.createTraceState ? api.createTraceState(state) : undefined,
  });
}

/**
 * Runs `body` inside the attempt's span (when OpenTelemetry is present) and sets the
 * span's status from what `failed` says of its outcome. `body` must not throw.
 */
export async function inAttemptSpan<T>(
  attempt: Attempt,
  body: () => Promise<T>,
  failed: (outcome: T) => string | undefined,
): Promise<T> {
  const api = await otel();
  if (!api) return body();
  const parent = parentContext(api, attempt.traceHeaders);
  const span = api.trace.getTracer("@taskyard/client", SDK_VERSION).startSpan(
    `process ${attempt.name}`,
    {
      kind: api.SpanKind.CONSUMER,
      attributes: {
        "taskyard.task_id": attempt.taskId,
        "taskyard.task_name": attempt.name,
        "taskyard.attempt": attempt.attempt,
      },
    },
    parent,
  );
  try {
    const outcome = await api.context.with(api.trace.setSpan(parent, span), body);
    const error = failed(outcome);
    span.setStatus(error === undefined ? { code: api.SpanStatusCode.OK } : { code: api.SpanStatusCode.ERROR, message: error });
    return outcome;
  } finally {
    span.end();
  }
}
