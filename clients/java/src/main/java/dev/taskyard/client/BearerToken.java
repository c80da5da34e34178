package dev.taskyard.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

/** Sends {@code authorization: Bearer <token>} on every call of the channel. */
final class BearerToken implements ClientInterceptor {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String value;

  BearerToken(String token) {
    if (token.isBlank() || token.chars().anyMatch(c -> c < 0x21 || c > 0x7e)) {
      throw new IllegalArgumentException("a token is printable ASCII without spaces");
    }
    this.value = "Bearer " + token;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        headers.discardAll(AUTHORIZATION);
        headers.put(AUTHORIZATION, value);
        super.start(listener, headers);
      }
    };
  }

  @Override
  public String toString() {
    return "BearerToken[***]"; // never the secret: this may end up in a log line
  }
}
