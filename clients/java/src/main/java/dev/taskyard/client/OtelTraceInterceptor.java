package dev.taskyard.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapSetter;

/**
 * Puts the current span's {@code traceparent} (and {@code tracestate}) on each call, so a
 * submitted task joins the caller's trace. Loaded only through {@link TraceContext}.
 */
final class OtelTraceInterceptor implements ClientInterceptor {
  private static final TextMapSetter<Metadata> SETTER =
      (headers, key, value) -> {
        Metadata.Key<String> k = Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER);
        headers.discardAll(k);
        headers.put(k, value);
      };

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    // The context of the thread that makes the call, not of the thread start() may run on.
    Context context = Context.current();
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        if (Span.fromContext(context).getSpanContext().isValid()) {
          W3CTraceContextPropagator.getInstance().inject(context, headers, SETTER);
        }
        super.start(listener, headers);
      }
    };
  }
}
