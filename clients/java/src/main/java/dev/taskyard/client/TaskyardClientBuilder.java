package dev.taskyard.client;

import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.TlsChannelCredentials;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Options of a {@link TaskyardClient}; from {@link TaskyardClient#builder(String)}.
 *
 * <p>TLS with the system's trusted CAs is the default. {@link #plaintext()} is for a gateway on
 * this machine ({@code taskyard dev}): a token is sent in plaintext only to a loopback address.
 */
public final class TaskyardClientBuilder {
  private final String target;
  private String token;
  private String tenant;
  private boolean plaintext;
  private byte[] caPem;
  private byte[] certPem;
  private byte[] keyPem;
  private String serverName;
  private Duration timeout = TaskyardClient.DEFAULT_TIMEOUT;

  TaskyardClientBuilder(String target) {
    this.target = Objects.requireNonNull(target, "target");
  }

  /**
   * Sent as {@code authorization: Bearer <token>} on every call; {@code null} or empty: none (so
   * {@code token(System.getenv("TASKYARD_TOKEN"))} works whether it is set or not).
   */
  public TaskyardClientBuilder token(String token) {
    this.token = token == null || token.isEmpty() ? null : token;
    return this;
  }

  /**
   * An operator token acting as this one tenant: every call carries {@code taskyard-tenant}, and
   * the gateway answers as it would that tenant's token (docs/tenants.md); {@code null} or empty:
   * none.
   *
   * @throws IllegalArgumentException for a name outside [a-z0-9-]{1,64}
   */
  public TaskyardClientBuilder tenant(String tenant) {
    if (tenant != null && !tenant.isEmpty()) {
      ActingTenant.check(tenant); // now, not at build()
    }
    this.tenant = tenant == null || tenant.isEmpty() ? null : tenant;
    return this;
  }

  /** TLS, trusting the system's CAs (the default). */
  public TaskyardClientBuilder tls() {
    plaintext = false;
    caPem = null;
    return this;
  }

  /** TLS, trusting the CA(s) of this PEM (the CA that signed the gateway's certificate). */
  public TaskyardClientBuilder tls(byte[] caPem) {
    if (!new String(caPem, StandardCharsets.US_ASCII).contains("-----BEGIN ")) {
      throw new IllegalArgumentException("the CA is not PEM: no -----BEGIN line");
    }
    this.plaintext = false;
    this.caPem = caPem.clone();
    return this;
  }

  /** TLS, trusting the CA(s) of this PEM file. */
  public TaskyardClientBuilder tls(Path caPemFile) {
    return tls(read(caPemFile));
  }

  /** A client certificate and its private key (PEM), for a gateway that asks for one (mTLS). */
  public TaskyardClientBuilder clientCertificate(byte[] certPem, byte[] keyPem) {
    this.certPem = certPem.clone();
    this.keyPem = keyPem.clone();
    return this;
  }

  /** The host name to verify the gateway's certificate against, when it is not the target's. */
  public TaskyardClientBuilder serverName(String serverName) {
    this.serverName = serverName;
    return this;
  }

  /** No TLS: for a gateway on this machine (a token goes only to a loopback address). */
  public TaskyardClientBuilder plaintext() {
    plaintext = true;
    return this;
  }

  /** The deadline of each call, unless the call says otherwise (default 30 s). */
  public TaskyardClientBuilder timeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("the timeout must be positive: " + timeout);
    }
    this.timeout = timeout;
    return this;
  }

  /**
   * The client; close it when done. Connecting is lazy: an unreachable gateway fails the first
   * call ({@code UNAVAILABLE}), not this.
   *
   * @throws IllegalArgumentException for options that do not go together
   */
  public TaskyardClient build() {
    if (plaintext && token != null && !Targets.isLoopback(target)) {
      throw new IllegalArgumentException(
          "a token is sent in plaintext only to a loopback address, and " + target + " is not one: use TLS");
    }
    if (plaintext && (caPem != null || certPem != null)) {
      throw new IllegalArgumentException("plaintext() does not go with a CA or a client certificate");
    }
    ManagedChannelBuilder<?> channel = Grpc.newChannelBuilder(target, credentials())
        .defaultServiceConfig(RetryPolicy.serviceConfig())
        .enableRetry()
        .userAgent("taskyard-java/" + TaskyardClient.VERSION);
    if (serverName != null) {
      channel.overrideAuthority(serverName);
    }
    List<ClientInterceptor> interceptors = new ArrayList<>();
    if (token != null) {
      interceptors.add(new BearerToken(token));
    }
    if (tenant != null) {
      interceptors.add(new ActingTenant(tenant));
    }
    TraceContext.interceptor().ifPresent(interceptors::add);
    channel.intercept(interceptors);
    ManagedChannel built = channel.build();
    return new TaskyardClient(built, timeout);
  }

  private ChannelCredentials credentials() {
    if (plaintext) {
      return InsecureChannelCredentials.create();
    }
    if (caPem == null && certPem == null) {
      return TlsChannelCredentials.create();
    }
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    try {
      if (caPem != null) {
        tls.trustManager(new ByteArrayInputStream(caPem));
      }
      if (certPem != null) {
        tls.keyManager(new ByteArrayInputStream(certPem), new ByteArrayInputStream(keyPem));
      }
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException("cannot use the TLS certificates: " + e.getMessage(), e);
    }
    return tls.build();
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  @Override
  public String toString() {
    return "TaskyardClientBuilder[" + target + (plaintext ? ", plaintext" : ", tls") + "]";
  }
}
