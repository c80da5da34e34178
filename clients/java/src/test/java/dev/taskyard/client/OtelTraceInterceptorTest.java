package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.io.InputStream;
import org.junit.jupiter.api.Test;

class OtelTraceInterceptorTest {
  private static final Metadata.Key<String> TRACEPARENT =
      Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);

  @Test
  void injectsTheCurrentSpan() {
    SpanContext span = SpanContext.create(
        "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getSampled(), TraceState.getDefault());
    Metadata headers;
    Scope scope = Context.root().with(Span.wrap(span)).makeCurrent();
    try {
      headers = start();
    } finally {
      scope.close();
    }
    assertEquals("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", headers.get(TRACEPARENT));
  }

  @Test
  void sendsNothingOutsideASpan() {
    assertNull(start().get(TRACEPARENT));
  }

  @Test
  void isFoundWhenTheApiIsPresent() {
    assertEquals(true, TraceContext.interceptor().isPresent());
  }

  private static Metadata start() {
    Metadata[] seen = new Metadata[1];
    Channel capture = new Channel() {
      @Override
      public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return new ClientCall<>() {
          @Override
          public void start(Listener<R> listener, Metadata headers) {
            seen[0] = headers;
          }

          @Override
          public void request(int n) {}

          @Override
          public void cancel(String message, Throwable cause) {}

          @Override
          public void halfClose() {}

          @Override
          public void sendMessage(Q message) {}
        };
      }

      @Override
      public String authority() {
        return "test";
      }
    };
    MethodDescriptor<InputStream, InputStream> method = MethodDescriptor.<InputStream, InputStream>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName("taskyard.v1.TaskService/GetTask")
        .setRequestMarshaller(new Raw())
        .setResponseMarshaller(new Raw())
        .build();
    new OtelTraceInterceptor()
        .interceptCall(method, CallOptions.DEFAULT, capture)
        .start(new ClientCall.Listener<>() {}, new Metadata());
    return seen[0];
  }

  private static final class Raw implements MethodDescriptor.Marshaller<InputStream> {
    @Override
    public InputStream stream(InputStream value) {
      return value;
    }

    @Override
    public InputStream parse(InputStream stream) {
      return stream;
    }
  }
}
