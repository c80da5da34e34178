package dev.taskyard.client;

import dev.taskyard.v1.CreateTenantRequest;
import dev.taskyard.v1.GetTenantRequest;
import dev.taskyard.v1.ListTenantsRequest;
import dev.taskyard.v1.ListTenantsResponse;
import dev.taskyard.v1.ResumeTenantRequest;
import dev.taskyard.v1.SuspendTenantRequest;
import dev.taskyard.v1.TenantServiceGrpc;
import dev.taskyard.v1.TenantServiceGrpc.TenantServiceBlockingStub;
import dev.taskyard.v1.UpdateTenantRequest;
import io.grpc.Channel;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Tenants ({@code TenantService}), from {@link TaskyardClient#tenants()}. Every call but {@link
 * #get} takes an operator token (one without {@code tenant=} in the gateway's tokens file): a
 * tenant token fails with {@code PERMISSION_DENIED}, reason {@code OPERATOR_ONLY}. A tenant token
 * may get its own tenant. Calls have the client's deadline and fail with {@link
 * TaskyardException}, as the task calls do.
 *
 * <pre>{@code
 * client.tenants().create(TenantSpec.builder("acme").maxConcurrency(50).weight(2).build());
 * client.tenants().suspend("acme", "invoice overdue");
 * }</pre>
 */
public final class Tenants {
  private final TenantServiceBlockingStub stub;
  private final Duration timeout;

  Tenants(Channel channel, Duration timeout) {
    this.stub = TenantServiceGrpc.newBlockingStub(channel);
    this.timeout = timeout;
  }

  /** Stores a new tenant, active; a name already taken fails with {@code ALREADY_EXISTS}. */
  public TenantInfo create(TenantSpec tenant) {
    CreateTenantRequest req = CreateTenantRequest.newBuilder().setTenant(tenant.toProto()).build();
    return TenantInfo.fromProto(TaskyardClient.call(() -> stub().createTenant(req)).getTenant());
  }

  /** The tenant named {@code name}; {@code NOT_FOUND} when none (for a tenant token: not its own). */
  public TenantInfo get(String name) {
    GetTenantRequest req = GetTenantRequest.newBuilder().setName(name).build();
    return TenantInfo.fromProto(TaskyardClient.call(() -> stub().getTenant(req)).getTenant());
  }

  /**
   * One page of tenants, by name.
   *
   * @param pageSize 1 to 1000; 0 means the server's default (100)
   * @param pageToken a {@link TenantPage#nextPageToken()}; empty for the first page
   */
  public TenantPage list(int pageSize, String pageToken) {
    ListTenantsRequest req = ListTenantsRequest.newBuilder().setPageSize(pageSize).setPageToken(pageToken).build();
    ListTenantsResponse resp = TaskyardClient.call(() -> stub().listTenants(req));
    return new TenantPage(resp.getTenantsList().stream().map(TenantInfo::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every tenant, by name; pages of {@code pageSize} are fetched as the iteration reaches them. */
  public Iterable<TenantInfo> iterate(int pageSize) {
    return () -> pager(pageSize);
  }

  /** {@link #iterate} as a sequential, lazy stream. */
  public Stream<TenantInfo> stream(int pageSize) {
    Spliterator<TenantInfo> tenants =
        Spliterators.spliteratorUnknownSize(pager(pageSize), Spliterator.ORDERED | Spliterator.NONNULL);
    return StreamSupport.stream(tenants, false);
  }

  /** Replaces the quota, weight and description of {@code tenant.name()}; {@code NOT_FOUND} when none. */
  public TenantInfo update(TenantSpec tenant) {
    UpdateTenantRequest req = UpdateTenantRequest.newBuilder().setTenant(tenant.toProto()).build();
    return TenantInfo.fromProto(TaskyardClient.call(() -> stub().updateTenant(req)).getTenant());
  }

  /**
   * Stops the tenant's dispatch and refuses its submissions ({@code FAILED_PRECONDITION}, reason
   * {@code TENANT_SUSPENDED}); nothing it had is lost, attempts already running finish.
   *
   * @param reason kept in the audit event (tenant.suspended); may be empty
   */
  public TenantInfo suspend(String name, String reason) {
    SuspendTenantRequest req = SuspendTenantRequest.newBuilder().setName(name).setReason(reason).build();
    return TenantInfo.fromProto(TaskyardClient.call(() -> stub().suspendTenant(req)).getTenant());
  }

  /** Dispatches the tenant's tasks and takes its submissions again. */
  public TenantInfo resume(String name) {
    ResumeTenantRequest req = ResumeTenantRequest.newBuilder().setName(name).build();
    return TenantInfo.fromProto(TaskyardClient.call(() -> stub().resumeTenant(req)).getTenant());
  }

  private Pager<TenantInfo> pager(int pageSize) {
    return new Pager<>("", token -> {
      TenantPage page = list(pageSize, token);
      return new Pager.Page<>(page.tenants(), page.nextPageToken());
    });
  }

  private TenantServiceBlockingStub stub() {
    return stub.withDeadline(Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS));
  }

  @Override
  public String toString() {
    return "Tenants[" + stub.getChannel().authority() + "]";
  }
}
