package dev.taskyard.client;

import dev.taskyard.v1.CancelRedriveRequest;
import dev.taskyard.v1.FailureServiceGrpc;
import dev.taskyard.v1.FailureServiceGrpc.FailureServiceBlockingStub;
import dev.taskyard.v1.GetRedriveRequest;
import dev.taskyard.v1.ListFailureGroupsRequest;
import dev.taskyard.v1.ListFailureGroupsResponse;
import dev.taskyard.v1.ListFailuresRequest;
import dev.taskyard.v1.ListFailuresResponse;
import dev.taskyard.v1.ListRedriveItemsRequest;
import dev.taskyard.v1.ListRedriveItemsResponse;
import dev.taskyard.v1.ListRedrivesRequest;
import dev.taskyard.v1.ListRedrivesResponse;
import dev.taskyard.v1.PauseRedriveRequest;
import dev.taskyard.v1.PurgeDeadLettersRequest;
import dev.taskyard.v1.RedriveRequest;
import dev.taskyard.v1.RedriveResponse;
import dev.taskyard.v1.ResumeRedriveRequest;
import io.grpc.Channel;
import io.grpc.Deadline;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Dead letters (tasks whose failure is final), grouped by failure fingerprint; their redrive at a
 * bounded rate, with an audit; their purge ({@code FailureService}), from {@link
 * TaskyardClient#failures()}. Reads take a token with the {@code read} scope; a redrive (a dry run
 * too), its controls and a purge {@code admin}. Calls have the client's deadline and fail with
 * {@link TaskyardException}, as the task calls do.
 *
 * <pre>{@code
 * FailureGroup top = client.failures().groups(FailureFilter.builder().build(), 10, "").items().get(0);
 * RedriveResult dry = client.failures().redrive(FailureFilter.group(top.groupId()), 50, true, "");
 * Redrive r = client.failures().redrive(FailureFilter.group(top.groupId()), 50, false, "").redrive().get();
 * }</pre>
 */
public final class Failures {
  /** The fastest a redrive may re-queue, in tasks a second. */
  public static final double MAX_RATE = 10_000;

  private final FailureServiceBlockingStub stub;
  private final Duration timeout;

  Failures(Channel channel, Duration timeout) {
    this.stub = FailureServiceGrpc.newBlockingStub(channel);
    this.timeout = timeout;
  }

  /**
   * One page of failure groups, most dead letters first.
   *
   * @param filter which groups (its group id and task ids are ignored; an empty one means every
   *     group)
   * @param pageSize 1 to 1000; 0 means the server's default (100)
   * @param pageToken a {@link Page#nextPageToken()}; empty for the first page
   */
  public Page<FailureGroup> groups(FailureFilter filter, int pageSize, String pageToken) {
    ListFailureGroupsRequest req = ListFailureGroupsRequest.newBuilder()
        .setFilter(filter.toProto())
        .setPageSize(pageSize)
        .setPageToken(pageToken)
        .build();
    ListFailureGroupsResponse resp = TaskyardClient.call(() -> stub().listFailureGroups(req));
    return new Page<>(resp.getGroupsList().stream().map(FailureGroup::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every group {@code filter} matches; pages are fetched as the iteration reaches them. */
  public Iterable<FailureGroup> iterateGroups(FailureFilter filter, int pageSize) {
    return () -> pager(token -> groups(filter, pageSize, token));
  }

  /**
   * One page of the dead letters {@code filter} matches (typically one group), newest failure
   * first.
   */
  public Page<DeadLetter> list(FailureFilter filter, int pageSize, String pageToken) {
    ListFailuresRequest req = ListFailuresRequest.newBuilder()
        .setFilter(filter.toProto())
        .setPageSize(pageSize)
        .setPageToken(pageToken)
        .build();
    ListFailuresResponse resp = TaskyardClient.call(() -> stub().listFailures(req));
    return new Page<>(resp.getFailuresList().stream().map(DeadLetter::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every dead letter {@code filter} matches; pages are fetched as the iteration reaches them. */
  public Iterable<DeadLetter> iterate(FailureFilter filter, int pageSize) {
    return () -> pager(token -> list(filter, pageSize, token));
  }

  /**
   * Re-queues the dead letters {@code filter} matches, each as a new attempt, at most {@code rate}
   * a second. The set is fixed when the call is accepted; the leading scheduler runs it, across
   * restarts. A dry run only counts them and returns a sample. A filter naming a task that is not
   * a dead letter fails with FAILED_PRECONDITION, and so does one that matches nothing.
   *
   * @param rate tasks a second: more than 0, at most {@link #MAX_RATE}
   * @param note kept with the redrive (at most 1024 bytes); may be empty
   * @throws IllegalArgumentException for a rate out of range, before anything is sent
   */
  public RedriveResult redrive(FailureFilter filter, double rate, boolean dryRun, String note) {
    if (!(rate > 0 && rate <= MAX_RATE)) {
      throw new IllegalArgumentException(
          "rate: must be more than 0 and at most " + (long) MAX_RATE + " tasks a second, not " + rate);
    }
    RedriveRequest req = RedriveRequest.newBuilder()
        .setFilter(filter.toProto())
        .setRate(rate)
        .setDryRun(dryRun)
        .setNote(note)
        .build();
    RedriveResponse resp = TaskyardClient.call(() -> stub().redrive(req));
    return new RedriveResult(
        resp.hasRedrive() ? Optional.of(Redrive.fromProto(resp.getRedrive())) : Optional.empty(),
        resp.getMatched(),
        resp.getSampleList().stream().map(DeadLetter::fromProto).toList());
  }

  /** The redrive with this id, and its progress. */
  public Redrive getRedrive(String id) {
    GetRedriveRequest req = GetRedriveRequest.newBuilder().setId(id).build();
    return Redrive.fromProto(TaskyardClient.call(() -> stub().getRedrive(req)).getRedrive());
  }

  /** One page of redrives, newest first. */
  public Page<Redrive> redrives(int pageSize, String pageToken) {
    ListRedrivesRequest req = ListRedrivesRequest.newBuilder().setPageSize(pageSize).setPageToken(pageToken).build();
    ListRedrivesResponse resp = TaskyardClient.call(() -> stub().listRedrives(req));
    return new Page<>(resp.getRedrivesList().stream().map(Redrive::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every redrive, newest first; pages are fetched as the iteration reaches them. */
  public Iterable<Redrive> iterateRedrives(int pageSize) {
    return () -> pager(token -> redrives(pageSize, token));
  }

  /** One page of what became of each task the redrive matched: its audit. */
  public Page<RedriveItem> redriveItems(String id, int pageSize, String pageToken) {
    ListRedriveItemsRequest req = ListRedriveItemsRequest.newBuilder()
        .setId(id)
        .setPageSize(pageSize)
        .setPageToken(pageToken)
        .build();
    ListRedriveItemsResponse resp = TaskyardClient.call(() -> stub().listRedriveItems(req));
    return new Page<>(resp.getItemsList().stream().map(RedriveItem::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every item of the redrive; pages are fetched as the iteration reaches them. */
  public Iterable<RedriveItem> iterateRedriveItems(String id, int pageSize) {
    return () -> pager(token -> redriveItems(id, pageSize, token));
  }

  /** Stops a RUNNING redrive where it is; otherwise FAILED_PRECONDITION. */
  public Redrive pauseRedrive(String id) {
    PauseRedriveRequest req = PauseRedriveRequest.newBuilder().setId(id).build();
    return Redrive.fromProto(TaskyardClient.call(() -> stub().pauseRedrive(req)).getRedrive());
  }

  /** Goes on with a PAUSED redrive; otherwise FAILED_PRECONDITION. */
  public Redrive resumeRedrive(String id) {
    ResumeRedriveRequest req = ResumeRedriveRequest.newBuilder().setId(id).build();
    return Redrive.fromProto(TaskyardClient.call(() -> stub().resumeRedrive(req)).getRedrive());
  }

  /**
   * Ends a redrive: the tasks it has not re-queued stay dead letters. FAILED_PRECONDITION once
   * DONE or CANCELLED.
   */
  public Redrive cancelRedrive(String id) {
    CancelRedriveRequest req = CancelRedriveRequest.newBuilder().setId(id).build();
    return Redrive.fromProto(TaskyardClient.call(() -> stub().cancelRedrive(req)).getRedrive());
  }

  /**
   * Deletes the dead letters {@code filter} matches (with their logs) now.
   *
   * @param dryRun count only; delete nothing
   * @return how many were deleted (would be, with {@code dryRun})
   */
  public long purge(FailureFilter filter, boolean dryRun) {
    PurgeDeadLettersRequest req = PurgeDeadLettersRequest.newBuilder().setFilter(filter.toProto()).setDryRun(dryRun).build();
    return TaskyardClient.call(() -> stub().purgeDeadLetters(req)).getPurged();
  }

  private static <T> Pager<T> pager(Function<String, Page<T>> fetch) {
    return new Pager<>("", token -> {
      Page<T> page = fetch.apply(token);
      return new Pager.Page<>(page.items(), page.nextPageToken());
    });
  }

  private FailureServiceBlockingStub stub() {
    return stub.withDeadline(Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS));
  }

  @Override
  public String toString() {
    return "Failures[" + stub.getChannel().authority() + "]";
  }
}
