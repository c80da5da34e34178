package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import dev.taskyard.v1.CreateTenantRequest;
import dev.taskyard.v1.CreateTenantResponse;
import dev.taskyard.v1.GetTenantRequest;
import dev.taskyard.v1.GetTenantResponse;
import dev.taskyard.v1.ListTenantsRequest;
import dev.taskyard.v1.ListTenantsResponse;
import dev.taskyard.v1.ResumeTenantRequest;
import dev.taskyard.v1.ResumeTenantResponse;
import dev.taskyard.v1.SuspendTenantRequest;
import dev.taskyard.v1.SuspendTenantResponse;
import dev.taskyard.v1.Tenant;
import dev.taskyard.v1.TenantServiceGrpc;
import dev.taskyard.v1.TenantState;
import dev.taskyard.v1.UpdateTenantRequest;
import dev.taskyard.v1.UpdateTenantResponse;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Tenants} against a fake TenantService, and the tenant option's metadata. */
class TenantsTest {
  /** Keeps tenants by name; lists one a page, the token being the next name. */
  static final class FakeTenants extends TenantServiceGrpc.TenantServiceImplBase {
    final Map<String, Tenant> tenants = new TreeMap<>();
    final List<SuspendTenantRequest> suspends = new ArrayList<>();

    private Tenant keep(Tenant t, TenantState state) {
      Tenant kept = t.toBuilder().setState(state).setCreatedAt(Timestamp.newBuilder().setSeconds(1_800_000_000)).build();
      tenants.put(kept.getName(), kept);
      return kept;
    }

    @Override
    public synchronized void createTenant(CreateTenantRequest req, StreamObserver<CreateTenantResponse> out) {
      if (tenants.containsKey(req.getTenant().getName())) {
        out.onError(Status.ALREADY_EXISTS.withDescription("taken").asRuntimeException());
        return;
      }
      out.onNext(CreateTenantResponse.newBuilder().setTenant(keep(req.getTenant(), TenantState.TENANT_STATE_ACTIVE)).build());
      out.onCompleted();
    }

    @Override
    public synchronized void getTenant(GetTenantRequest req, StreamObserver<GetTenantResponse> out) {
      Tenant t = tenants.get(req.getName());
      if (t == null) {
        out.onError(Status.NOT_FOUND.withDescription("no tenant").asRuntimeException());
        return;
      }
      out.onNext(GetTenantResponse.newBuilder().setTenant(t).build());
      out.onCompleted();
    }

    @Override
    public synchronized void listTenants(ListTenantsRequest req, StreamObserver<ListTenantsResponse> out) {
      List<String> names = new ArrayList<>(tenants.keySet());
      int at = req.getPageToken().isEmpty() ? 0 : names.indexOf(req.getPageToken());
      ListTenantsResponse.Builder resp = ListTenantsResponse.newBuilder().addTenants(tenants.get(names.get(at)));
      if (at + 1 < names.size()) {
        resp.setNextPageToken(names.get(at + 1));
      }
      out.onNext(resp.build());
      out.onCompleted();
    }

    @Override
    public synchronized void updateTenant(UpdateTenantRequest req, StreamObserver<UpdateTenantResponse> out) {
      out.onNext(UpdateTenantResponse.newBuilder().setTenant(keep(req.getTenant(), TenantState.TENANT_STATE_ACTIVE)).build());
      out.onCompleted();
    }

    @Override
    public synchronized void suspendTenant(SuspendTenantRequest req, StreamObserver<SuspendTenantResponse> out) {
      suspends.add(req);
      Tenant t = keep(tenants.get(req.getName()), TenantState.TENANT_STATE_SUSPENDED).toBuilder()
          .setSuspendedAt(Timestamp.newBuilder().setSeconds(1_800_000_100))
          .build();
      tenants.put(t.getName(), t);
      out.onNext(SuspendTenantResponse.newBuilder().setTenant(t).build());
      out.onCompleted();
    }

    @Override
    public synchronized void resumeTenant(ResumeTenantRequest req, StreamObserver<ResumeTenantResponse> out) {
      Tenant t = keep(tenants.get(req.getName()).toBuilder().clearSuspendedAt().build(), TenantState.TENANT_STATE_ACTIVE);
      out.onNext(ResumeTenantResponse.newBuilder().setTenant(t).build());
      out.onCompleted();
    }
  }

  /** Keeps the taskyard-tenant of every call. */
  static final class SeenTenants implements ServerInterceptor {
    final List<String> seen = new ArrayList<>();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      synchronized (seen) {
        seen.add(String.valueOf(headers.get(ActingTenant.KEY)));
      }
      return Contexts.interceptCall(io.grpc.Context.current(), call, headers, next);
    }
  }

  private final FakeTenants fake = new FakeTenants();
  private final SeenTenants seen = new SeenTenants();
  private Server server;
  private TaskyardClient client;

  @BeforeEach
  void start() throws IOException {
    server = ServerBuilder.forPort(0).addService(ServerInterceptors.intercept(fake, seen)).build().start();
    client = TaskyardClient.builder("127.0.0.1:" + server.getPort()).plaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    client.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void tenantsAreCreatedReadUpdatedSuspendedAndResumed() {
    TenantInfo made = client.tenants().create(TenantSpec.builder("acme")
        .maxConcurrency(50)
        .rate(new RateLimit(100, Duration.ofSeconds(1), 20))
        .weight(2)
        .description("the acme team")
        .build());
    assertEquals(TenantInfo.State.ACTIVE, made.state());
    assertEquals(50, made.maxConcurrency());
    assertEquals(new RateLimit(100, Duration.ofSeconds(1), 20), made.rate().orElseThrow());
    assertEquals(2, made.weight());
    assertEquals(Instant.ofEpochSecond(1_800_000_000), made.createdAt().orElseThrow());
    TaskyardException taken = assertThrows(TaskyardException.class, () -> client.tenants().create(TenantSpec.builder("acme").build()));
    assertEquals(Status.Code.ALREADY_EXISTS, taken.code());

    TenantInfo updated = client.tenants().update(TenantSpec.builder("acme").maxConcurrency(9).build());
    // The whole definition: what was left out is reset.
    assertEquals(9, updated.maxConcurrency());
    assertTrue(updated.rate().isEmpty());
    assertEquals(0, updated.weight());

    TenantInfo gone = client.tenants().suspend("acme", "invoice overdue");
    assertEquals(TenantInfo.State.SUSPENDED, gone.state());
    assertEquals(Instant.ofEpochSecond(1_800_000_100), gone.suspendedAt().orElseThrow());
    assertEquals("invoice overdue", fake.suspends.get(0).getReason());
    TenantInfo back = client.tenants().resume("acme");
    assertEquals(TenantInfo.State.ACTIVE, back.state());
    assertTrue(back.suspendedAt().isEmpty());
    TaskyardException missing = assertThrows(TaskyardException.class, () -> client.tenants().get("globex"));
    assertEquals(Status.Code.NOT_FOUND, missing.code());
  }

  @Test
  void iterationFollowsThePages() {
    for (String name : List.of("a", "b", "c")) {
      client.tenants().create(TenantSpec.builder(name).build());
    }
    List<String> names = new ArrayList<>();
    client.tenants().iterate(1).forEach(t -> names.add(t.name()));
    assertEquals(List.of("a", "b", "c"), names);
    assertEquals(List.of("a", "b", "c"), client.tenants().stream(1).map(TenantInfo::name).toList());
  }

  @Test
  void theTenantOptionGoesOnEveryCall() throws InterruptedException {
    try (TaskyardClient acting = TaskyardClient.builder("127.0.0.1:" + server.getPort()).plaintext().tenant("acme").build()) {
      acting.tenants().create(TenantSpec.builder("acme").build());
      acting.tenants().get("acme");
    }
    client.tenants().get("acme");
    assertEquals(List.of("acme", "acme", "null"), seen.seen);
  }

  @Test
  void aBadTenantNameIsRefusedByTheBuilder() {
    for (String bad : List.of("Acme", "a/b", "x".repeat(65))) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> TaskyardClient.builder("127.0.0.1:1").tenant(bad));
      assertTrue(e.getMessage().contains("a tenant is 1 to 64 characters of [a-z0-9-]"), e.getMessage());
    }
    assertFalse(TaskyardClient.builder("127.0.0.1:1").tenant("").toString().contains("tenant"));
  }

  @Test
  void aTaskSaysItsTenant() {
    assertEquals("acme", TaskInfo.fromProto(dev.taskyard.v1.Task.newBuilder().setId("t1").setTenant("acme").build()).tenant());
  }
}
