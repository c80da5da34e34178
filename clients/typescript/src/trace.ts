/**
 * W3C trace context on every call, from the caller's OpenTelemetry context, so that a
 * submitted task joins the caller's trace. @opentelemetry/api is an optional peer: it
 * is looked for once, on the first call, and without it calls go out unchanged.
 */
import type { Interceptor } from "@connectrpc/connect";

type OtelApi = typeof import("@opentelemetry/api");

let loading: Promise<OtelApi | undefined> | undefined;

/** The OpenTelemetry API when installed, loaded once (the worker's attempt spans use it too). */
export function otel(): Promise<OtelApi | undefined> {
  loading ??= import("@opentelemetry/api").then(
    (api) => api,
    () => undefined,
  );
  return loading;
}

/** The headers for the active context: those of the registered propagators, else W3C's. */
export function traceHeaders(api: OtelApi): Record<string, string> {
  const ctx = api.context.active();
  const carrier: Record<string, string> = {};
  api.propagation.inject(ctx, carrier);
  const span = api.trace.getSpanContext(ctx);
  // The API alone registers no propagator: a valid span still deserves a traceparent.
  if (carrier["traceparent"] === undefined && span && api.isSpanContextValid(span)) {
    const flags = (span.traceFlags & 0xff).toString(16).padStart(2, "0");
    carrier["traceparent"] = `00-${span.traceId}-${span.spanId}-${flags}`;
    const state = span.traceState?.serialize();
    if (state) carrier["tracestate"] = state;
  }
  return carrier;
}

export const traceContext: Interceptor = (next) => async (req) => {
  const api = await otel();
  if (api) {
    for (const [key, value] of Object.entries(traceHeaders(api))) req.header.set(key, value);
  }
  return next(req);
};
