package dev.taskyard.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.regex.Pattern;

/**
 * Sends {@code taskyard-tenant: <name>} on every call of the channel: an operator token acting as
 * that one tenant (docs/tenants.md).
 */
final class ActingTenant implements ClientInterceptor {
  static final Metadata.Key<String> KEY = Metadata.Key.of("taskyard-tenant", Metadata.ASCII_STRING_MARSHALLER);
  private static final Pattern NAME = Pattern.compile("[a-z0-9-]{1,64}");

  private final String tenant;

  ActingTenant(String tenant) {
    this.tenant = check(tenant);
  }

  /** {@code tenant} when it names a tenant (1 to 64 characters of [a-z0-9-]). */
  static String check(String tenant) {
    if (!NAME.matcher(tenant).matches()) {
      throw new IllegalArgumentException("a tenant is 1 to 64 characters of [a-z0-9-], not \"" + tenant + "\"");
    }
    return tenant;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        headers.discardAll(KEY);
        headers.put(KEY, tenant);
        super.start(listener, headers);
      }
    };
  }

  @Override
  public String toString() {
    return "ActingTenant[" + tenant + "]";
  }
}
