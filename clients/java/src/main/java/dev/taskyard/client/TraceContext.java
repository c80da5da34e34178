package dev.taskyard.client;

import io.grpc.ClientInterceptor;
import java.util.Optional;

/**
 * W3C trace context on calls, when the application has the OpenTelemetry API.
 *
 * <p>The API is an optional dependency: the interceptor's class refers to it, so it is loaded
 * only after a look-up found the API, and without it the client runs unchanged.
 */
final class TraceContext {
  private static final boolean AVAILABLE = available();

  private TraceContext() {}

  /** The interceptor that injects {@code traceparent}, or empty without OpenTelemetry. */
  static Optional<ClientInterceptor> interceptor() {
    return AVAILABLE ? Optional.of(new OtelTraceInterceptor()) : Optional.empty();
  }

  private static boolean available() {
    ClassLoader loader = TraceContext.class.getClassLoader();
    try {
      Class.forName("io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator", false, loader);
      Class.forName("io.opentelemetry.context.Context", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
