package dev.taskyard.client;

import dev.taskyard.v1.CreateLimitRequest;
import dev.taskyard.v1.DeleteLimitRequest;
import dev.taskyard.v1.GetLimitRequest;
import dev.taskyard.v1.LimitServiceGrpc;
import dev.taskyard.v1.LimitServiceGrpc.LimitServiceBlockingStub;
import dev.taskyard.v1.ListKeyWeightsRequest;
import dev.taskyard.v1.ListLimitsRequest;
import dev.taskyard.v1.ListLimitsResponse;
import dev.taskyard.v1.SetKeyWeightRequest;
import dev.taskyard.v1.UpdateLimitRequest;
import io.grpc.Channel;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.List;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Named rate and concurrency limits and fairness weights ({@code LimitService}), from {@link
 * TaskyardClient#limits()}. Changes take a token with the {@code admin} scope, reads {@code read}.
 * Calls have the client's deadline and fail with {@link TaskyardException}, as the task calls do.
 *
 * <pre>{@code
 * client.limits().create(LimitSpec.concurrency("per-customer", 3).perKey(true).build());
 * client.submit(TaskSpec.builder("charge").args(42)
 *     .limit(LimitUse.of("per-customer", "customer:42"))
 *     .fairnessKey("customer:42")
 *     .build());
 * }</pre>
 */
public final class Limits {
  private final LimitServiceBlockingStub stub;
  private final Duration timeout;

  Limits(Channel channel, Duration timeout) {
    this.stub = LimitServiceGrpc.newBlockingStub(channel);
    this.timeout = timeout;
  }

  /** Stores a new limit; a name already taken fails with {@code ALREADY_EXISTS}. */
  public LimitInfo create(LimitSpec limit) {
    CreateLimitRequest req = CreateLimitRequest.newBuilder().setLimit(limit.toProto()).build();
    return LimitInfo.fromProto(TaskyardClient.call(() -> stub().createLimit(req)).getLimit());
  }

  /** The limit named {@code name}, with its usage when the scheduler answers. */
  public LimitInfo get(String name) {
    GetLimitRequest req = GetLimitRequest.newBuilder().setName(name).build();
    return LimitInfo.fromProto(TaskyardClient.call(() -> stub().getLimit(req)).getLimit());
  }

  /**
   * One page of limits, by name.
   *
   * @param pageSize 1 to 1000; 0 means the server's default (100)
   * @param pageToken a {@link LimitPage#nextPageToken()}; empty for the first page
   */
  public LimitPage list(int pageSize, String pageToken) {
    ListLimitsRequest req = ListLimitsRequest.newBuilder().setPageSize(pageSize).setPageToken(pageToken).build();
    ListLimitsResponse resp = TaskyardClient.call(() -> stub().listLimits(req));
    return new LimitPage(resp.getLimitsList().stream().map(LimitInfo::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every limit, by name; pages of {@code pageSize} are fetched as the iteration reaches them. */
  public Iterable<LimitInfo> iterate(int pageSize) {
    return () -> pager(pageSize);
  }

  /** {@link #iterate} as a sequential, lazy stream. */
  public Stream<LimitInfo> stream(int pageSize) {
    Spliterator<LimitInfo> limits =
        Spliterators.spliteratorUnknownSize(pager(pageSize), Spliterator.ORDERED | Spliterator.NONNULL);
    return StreamSupport.stream(limits, false);
  }

  /** Replaces the definition of the limit named {@code limit.name()}; {@code NOT_FOUND} when none. */
  public LimitInfo update(LimitSpec limit) {
    UpdateLimitRequest req = UpdateLimitRequest.newBuilder().setLimit(limit.toProto()).build();
    return LimitInfo.fromProto(TaskyardClient.call(() -> stub().updateLimit(req)).getLimit());
  }

  /**
   * Deletes the limit named {@code name}. While tasks that are not final use it, this fails with
   * {@code FAILED_PRECONDITION} unless {@code force}: then those tasks run without it.
   *
   * @return how many tasks that were not final used it (with {@code force})
   */
  public long delete(String name, boolean force) {
    DeleteLimitRequest req = DeleteLimitRequest.newBuilder().setName(name).setForce(force).build();
    return TaskyardClient.call(() -> stub().deleteLimit(req)).getTasksReleased();
  }

  /** Sets the fairness weight of {@code key} (1 to 1000); 0 removes it (back to 1). */
  public KeyWeight setKeyWeight(String key, int weight) {
    SetKeyWeightRequest req = SetKeyWeightRequest.newBuilder()
        .setWeight(dev.taskyard.v1.KeyWeight.newBuilder().setKey(key).setWeight(weight))
        .build();
    return KeyWeight.fromProto(TaskyardClient.call(() -> stub().setKeyWeight(req)).getWeight());
  }

  /** Every fairness weight set, by key. */
  public List<KeyWeight> listKeyWeights() {
    ListKeyWeightsRequest req = ListKeyWeightsRequest.getDefaultInstance();
    return TaskyardClient.call(() -> stub().listKeyWeights(req)).getWeightsList().stream()
        .map(KeyWeight::fromProto)
        .toList();
  }

  private Pager<LimitInfo> pager(int pageSize) {
    return new Pager<>("", token -> {
      LimitPage page = list(pageSize, token);
      return new Pager.Page<>(page.limits(), page.nextPageToken());
    });
  }

  private LimitServiceBlockingStub stub() {
    return stub.withDeadline(Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS));
  }

  @Override
  public String toString() {
    return "Limits[" + stub.getChannel().authority() + "]";
  }
}
