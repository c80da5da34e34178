package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.Timestamp;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import dev.taskyard.v1.CancelRedriveRequest;
import dev.taskyard.v1.CancelRedriveResponse;
import dev.taskyard.v1.FailureServiceGrpc;
import dev.taskyard.v1.GetRedriveRequest;
import dev.taskyard.v1.GetRedriveResponse;
import dev.taskyard.v1.GetTaskRequest;
import dev.taskyard.v1.GetTaskResponse;
import dev.taskyard.v1.ListFailureGroupsRequest;
import dev.taskyard.v1.ListFailureGroupsResponse;
import dev.taskyard.v1.ListFailuresRequest;
import dev.taskyard.v1.ListFailuresResponse;
import dev.taskyard.v1.ListRedriveItemsRequest;
import dev.taskyard.v1.ListRedriveItemsResponse;
import dev.taskyard.v1.ListRedrivesRequest;
import dev.taskyard.v1.ListRedrivesResponse;
import dev.taskyard.v1.PauseRedriveRequest;
import dev.taskyard.v1.PauseRedriveResponse;
import dev.taskyard.v1.PurgeDeadLettersRequest;
import dev.taskyard.v1.PurgeDeadLettersResponse;
import dev.taskyard.v1.RedriveRequest;
import dev.taskyard.v1.RedriveResponse;
import dev.taskyard.v1.ResumeRedriveRequest;
import dev.taskyard.v1.ResumeRedriveResponse;
import dev.taskyard.v1.Task;
import dev.taskyard.v1.TaskServiceGrpc;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Failures} against a fake FailureService: what each call sends and reads back. */
class FailuresTest {
  static final Instant FAILED_AT = Instant.parse("2026-12-01T10:42:57Z");

  static Timestamp ts(Instant at) {
    return Timestamp.newBuilder().setSeconds(at.getEpochSecond()).setNanos(at.getNano()).build();
  }

  /**
   * Dead letters of one group and the redrives made of them; every listing pages one item at a
   * time (the token is the next item's index).
   */
  static final class FakeFailures extends FailureServiceGrpc.FailureServiceImplBase {
    final List<dev.taskyard.v1.DeadLetter> dead = new ArrayList<>();
    final List<dev.taskyard.v1.Redrive> redrives = new ArrayList<>();
    final List<dev.taskyard.v1.FailureFilter> filters = new ArrayList<>();
    final List<RedriveRequest> requests = new ArrayList<>();
    final List<PurgeDeadLettersRequest> purges = new ArrayList<>();

    FakeFailures(int n) {
      for (int i = 0; i < n; i++) {
        dead.add(dev.taskyard.v1.DeadLetter.newBuilder()
            .setTaskId("t-" + i)
            .setQueue("default")
            .setName("charge")
            .setReason(dev.taskyard.v1.DeadLetterReason.DEAD_LETTER_REASON_RETRIES_EXHAUSTED)
            .setGroupId("g1")
            .setFailure(dev.taskyard.v1.TaskFailure.newBuilder()
                .setType("RuntimeError")
                .setMessage("503 from payments")
                .setAttempt(3)
                .setFailedAt(ts(FAILED_AT))
                .setGroupId("g1"))
            .putLabels("tenant", "acme")
            .build());
      }
    }

    static <T> List<T> page(List<T> items, String token) {
      int i = token.isEmpty() ? 0 : Integer.parseInt(token);
      return items.subList(Math.min(i, items.size()), Math.min(i + 1, items.size()));
    }

    static String next(List<?> items, String token) {
      int i = token.isEmpty() ? 0 : Integer.parseInt(token);
      return i + 1 < items.size() ? String.valueOf(i + 1) : "";
    }

    List<dev.taskyard.v1.DeadLetter> matching(dev.taskyard.v1.FailureFilter f) {
      return dead.stream()
          .filter(d -> f.getGroupId().isEmpty() || d.getGroupId().equals(f.getGroupId()))
          .filter(d -> f.getTaskIdsCount() == 0 || f.getTaskIdsList().contains(d.getTaskId()))
          .toList();
    }

    dev.taskyard.v1.Redrive find(String id) {
      return redrives.stream().filter(r -> r.getId().equals(id)).findFirst().orElse(null);
    }

    @Override
    public synchronized void listFailureGroups(
        ListFailureGroupsRequest req, StreamObserver<ListFailureGroupsResponse> out) {
      filters.add(req.getFilter());
      List<dev.taskyard.v1.FailureGroup> groups = List.of(
          dev.taskyard.v1.FailureGroup.newBuilder()
              .setGroupId("g1")
              .setQueue("default")
              .setName("charge")
              .setType("RuntimeError")
              .setMessage("<n> from payments")
              .setFrame("billing:charge")
              .setCount(dead.size())
              .setFirstSeen(ts(FAILED_AT))
              .setLastSeen(ts(FAILED_AT.plusSeconds(60)))
              .addAllSampleTaskIds(List.of("t-1", "t-0"))
              .setSampleTraceback("Traceback ...")
              .build(),
          dev.taskyard.v1.FailureGroup.newBuilder().setGroupId("g2").setCount(1).build());
      out.onNext(ListFailureGroupsResponse.newBuilder()
          .addAllGroups(page(groups, req.getPageToken()))
          .setNextPageToken(next(groups, req.getPageToken()))
          .build());
      out.onCompleted();
    }

    @Override
    public synchronized void listFailures(ListFailuresRequest req, StreamObserver<ListFailuresResponse> out) {
      filters.add(req.getFilter());
      List<dev.taskyard.v1.DeadLetter> all = matching(req.getFilter());
      out.onNext(ListFailuresResponse.newBuilder()
          .addAllFailures(page(all, req.getPageToken()))
          .setNextPageToken(next(all, req.getPageToken()))
          .build());
      out.onCompleted();
    }

    @Override
    public synchronized void redrive(RedriveRequest req, StreamObserver<RedriveResponse> out) {
      requests.add(req);
      List<dev.taskyard.v1.DeadLetter> matched = matching(req.getFilter());
      if (!req.getDryRun() && matched.isEmpty()) {
        com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
            .setCode(Code.FAILED_PRECONDITION_VALUE)
            .setMessage("nothing to redrive")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("NOTHING_TO_REDRIVE").setDomain("taskyard.dev").build()))
            .build();
        out.onError(StatusProto.toStatusRuntimeException(st));
        return;
      }
      RedriveResponse.Builder resp = RedriveResponse.newBuilder()
          .setMatched(matched.size())
          .addAllSample(matched.subList(0, Math.min(10, matched.size())));
      if (!req.getDryRun()) {
        dev.taskyard.v1.Redrive r = dev.taskyard.v1.Redrive.newBuilder()
            .setId("r-" + (redrives.size() + 1))
            .setFilter(req.getFilter())
            .setRate(req.getRate())
            .setNote(req.getNote())
            .setState(dev.taskyard.v1.RedriveState.REDRIVE_STATE_RUNNING)
            .setCreatedBy("ops")
            .setCreatedAt(ts(FAILED_AT))
            .setMatched(matched.size())
            .build();
        redrives.add(0, r);
        resp.setRedrive(r);
      }
      out.onNext(resp.build());
      out.onCompleted();
    }

    @Override
    public synchronized void getRedrive(GetRedriveRequest req, StreamObserver<GetRedriveResponse> out) {
      dev.taskyard.v1.Redrive r = find(req.getId());
      if (r == null) {
        out.onError(Status.NOT_FOUND.withDescription("no redrive " + req.getId()).asRuntimeException());
        return;
      }
      out.onNext(GetRedriveResponse.newBuilder().setRedrive(r).build());
      out.onCompleted();
    }

    @Override
    public synchronized void listRedrives(ListRedrivesRequest req, StreamObserver<ListRedrivesResponse> out) {
      out.onNext(ListRedrivesResponse.newBuilder()
          .addAllRedrives(page(redrives, req.getPageToken()))
          .setNextPageToken(next(redrives, req.getPageToken()))
          .build());
      out.onCompleted();
    }

    @Override
    public synchronized void listRedriveItems(
        ListRedriveItemsRequest req, StreamObserver<ListRedriveItemsResponse> out) {
      dev.taskyard.v1.Redrive r = find(req.getId());
      List<dev.taskyard.v1.RedriveItem> items = matching(r.getFilter()).stream()
          .map(d -> dev.taskyard.v1.RedriveItem.newBuilder()
              .setTaskId(d.getTaskId())
              .setOutcome(dev.taskyard.v1.RedriveOutcome.REDRIVE_OUTCOME_REQUEUED)
              .setFailedAttempt(3)
              .setNewAttempt(4)
              .setAt(ts(FAILED_AT))
              .build())
          .toList();
      out.onNext(ListRedriveItemsResponse.newBuilder()
          .addAllItems(page(items, req.getPageToken()))
          .setNextPageToken(next(items, req.getPageToken()))
          .build());
      out.onCompleted();
    }

    /** Moves a redrive from one of {@code from} to {@code to}, or refuses as the gateway does. */
    synchronized dev.taskyard.v1.Redrive control(
        String id, List<dev.taskyard.v1.RedriveState> from, dev.taskyard.v1.RedriveState to) {
      dev.taskyard.v1.Redrive r = find(id);
      if (!from.contains(r.getState())) {
        throw Status.FAILED_PRECONDITION.withDescription("redrive " + id + " is " + r.getState()).asRuntimeException();
      }
      dev.taskyard.v1.Redrive moved = r.toBuilder().setState(to).build();
      redrives.set(redrives.indexOf(r), moved);
      return moved;
    }

    @Override
    public void pauseRedrive(PauseRedriveRequest req, StreamObserver<PauseRedriveResponse> out) {
      try {
        dev.taskyard.v1.Redrive r = control(
            req.getId(),
            List.of(dev.taskyard.v1.RedriveState.REDRIVE_STATE_RUNNING),
            dev.taskyard.v1.RedriveState.REDRIVE_STATE_PAUSED);
        out.onNext(PauseRedriveResponse.newBuilder().setRedrive(r).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public void resumeRedrive(ResumeRedriveRequest req, StreamObserver<ResumeRedriveResponse> out) {
      try {
        dev.taskyard.v1.Redrive r = control(
            req.getId(),
            List.of(dev.taskyard.v1.RedriveState.REDRIVE_STATE_PAUSED),
            dev.taskyard.v1.RedriveState.REDRIVE_STATE_RUNNING);
        out.onNext(ResumeRedriveResponse.newBuilder().setRedrive(r).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public void cancelRedrive(CancelRedriveRequest req, StreamObserver<CancelRedriveResponse> out) {
      try {
        dev.taskyard.v1.Redrive r = control(
            req.getId(),
            List.of(
                dev.taskyard.v1.RedriveState.REDRIVE_STATE_RUNNING,
                dev.taskyard.v1.RedriveState.REDRIVE_STATE_PAUSED),
            dev.taskyard.v1.RedriveState.REDRIVE_STATE_CANCELLED);
        out.onNext(CancelRedriveResponse.newBuilder().setRedrive(r).build());
        out.onCompleted();
      } catch (RuntimeException e) {
        out.onError(e);
      }
    }

    @Override
    public synchronized void purgeDeadLetters(
        PurgeDeadLettersRequest req, StreamObserver<PurgeDeadLettersResponse> out) {
      purges.add(req);
      out.onNext(PurgeDeadLettersResponse.newBuilder().setPurged(matching(req.getFilter()).size()).build());
      out.onCompleted();
    }
  }

  /** Answers every get with one redriven dead letter. */
  static final class RedrivenTask extends TaskServiceGrpc.TaskServiceImplBase {
    @Override
    public void getTask(GetTaskRequest req, StreamObserver<GetTaskResponse> out) {
      Task task = Task.newBuilder()
          .setId(req.getId())
          .setState(dev.taskyard.v1.TaskState.TASK_STATE_FAILURE)
          .setAttempt(2)
          .setDeadLetterReason(dev.taskyard.v1.DeadLetterReason.DEAD_LETTER_REASON_QUARANTINED)
          .setRedriveId("r-1")
          .setRedrivenFromAttempt(1)
          .addFailures(dev.taskyard.v1.TaskFailure.newBuilder().setAttempt(1).setGroupId("g1").setRedriveId("r-1"))
          .addFailures(dev.taskyard.v1.TaskFailure.newBuilder().setAttempt(2).setGroupId("g1"))
          .build();
      out.onNext(GetTaskResponse.newBuilder().setTask(task).build());
      out.onCompleted();
    }
  }

  private final FakeFailures fake = new FakeFailures(3);
  private Server server;
  private TaskyardClient client;

  @BeforeEach
  void start() throws IOException {
    server = ServerBuilder.forPort(0).addService(fake).addService(new RedrivenTask()).build().start();
    client = TaskyardClient.builder("127.0.0.1:" + server.getPort()).plaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    client.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void groupsSendTheFilterAndIterateEveryPage() {
    Instant after = FAILED_AT.minusSeconds(3600);
    FailureFilter filter = FailureFilter.builder()
        .queue("default")
        .reason(DeadLetterReason.RETRIES_EXHAUSTED)
        .failedAfter(after)
        .build();
    Page<FailureGroup> page = client.failures().groups(filter, 1, "");
    FailureGroup g = page.items().get(0);
    assertEquals(
        new FailureGroup(
            "g1",
            "default",
            "charge",
            "RuntimeError",
            "<n> from payments",
            "billing:charge",
            3,
            java.util.Optional.of(FAILED_AT),
            java.util.Optional.of(FAILED_AT.plusSeconds(60)),
            List.of("t-1", "t-0"),
            "Traceback ..."),
        g);
    assertTrue(page.hasNextPage());
    dev.taskyard.v1.FailureFilter sent = fake.filters.get(0);
    assertEquals("default", sent.getQueue());
    assertEquals(dev.taskyard.v1.DeadLetterReason.DEAD_LETTER_REASON_RETRIES_EXHAUSTED, sent.getReason());
    assertEquals(after.getEpochSecond(), sent.getFailedAfter().getSeconds());
    assertFalse(sent.hasFailedBefore());
    List<String> ids = new ArrayList<>();
    client.failures().iterateGroups(filter, 1).forEach(x -> ids.add(x.groupId()));
    assertEquals(List.of("g1", "g2"), ids);
  }

  @Test
  void deadLettersOfAGroupWithTheirFinalFailure() {
    FailureFilter filter = FailureFilter.builder()
        .groupId("g1")
        .taskIds(List.of("t-0", "t-2"))
        .label("tenant", "acme")
        .build();
    List<DeadLetter> got = new ArrayList<>();
    client.failures().iterate(filter, 1).forEach(got::add);
    assertEquals(List.of("t-0", "t-2"), got.stream().map(DeadLetter::taskId).toList());
    DeadLetter d = got.get(0);
    assertEquals(DeadLetterReason.RETRIES_EXHAUSTED, d.reason());
    assertEquals("g1", d.groupId());
    assertEquals(Map.of("tenant", "acme"), d.labels());
    TaskFailure f = d.failure().orElseThrow();
    assertEquals(new TaskFailure("RuntimeError", "503 from payments", "", 3, "g1", ""), f);
    assertEquals(List.of("t-0", "t-2"), fake.filters.get(0).getTaskIdsList());
    assertEquals(Map.of("tenant", "acme"), fake.filters.get(0).getLabelsMap());
  }

  @Test
  void aDryRunCountsThenARealRunReturnsTheRedriveAndItsAudit() {
    RedriveResult dry = client.failures().redrive(FailureFilter.group("g1"), 50, true, "");
    assertTrue(dry.redrive().isEmpty());
    assertEquals(3, dry.matched());
    assertEquals(List.of("t-0", "t-1", "t-2"), dry.sample().stream().map(DeadLetter::taskId).toList());
    Redrive r = client.failures().redrive(FailureFilter.group("g1"), 200, false, "payments back").redrive().orElseThrow();
    assertEquals("r-1", r.id());
    assertEquals(RedriveState.RUNNING, r.state());
    assertEquals(200, r.rate());
    assertEquals("payments back", r.note());
    assertEquals(3, r.matched());
    assertEquals("ops", r.createdBy());
    assertEquals(FAILED_AT, r.createdAt().orElseThrow());
    assertTrue(r.finishedAt().isEmpty());
    assertEquals(FailureFilter.group("g1"), r.filter());
    assertEquals(List.of(true, false), fake.requests.stream().map(RedriveRequest::getDryRun).toList());
    assertEquals(RedriveState.RUNNING, client.failures().getRedrive("r-1").state());
    List<RedriveItem> items = new ArrayList<>();
    client.failures().iterateRedriveItems("r-1", 1).forEach(items::add);
    assertEquals(3, items.size());
    assertEquals(
        new RedriveItem("t-0", RedriveOutcome.REQUEUED, 3, 4, java.util.Optional.of(FAILED_AT), ""), items.get(0));
    TaskyardException missing = assertThrows(TaskyardException.class, () -> client.failures().getRedrive("r-404"));
    assertEquals(Status.Code.NOT_FOUND, missing.code());
    TaskyardException nothing = assertThrows(
        TaskyardException.class, () -> client.failures().redrive(FailureFilter.group("none"), 1, false, ""));
    assertEquals(Status.Code.FAILED_PRECONDITION, nothing.code());
    assertEquals("NOTHING_TO_REDRIVE", nothing.reason());
  }

  @Test
  void aBadRateOrTooManyIdsIsRefusedBeforeSending() {
    for (double rate : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY, 10_001}) {
      assertThrows(
          IllegalArgumentException.class,
          () -> client.failures().redrive(FailureFilter.all(), rate, false, ""),
          String.valueOf(rate));
    }
    List<String> ids = new ArrayList<>();
    for (int i = 0; i <= FailureFilter.MAX_TASK_IDS; i++) {
      ids.add("t-" + i);
    }
    IllegalArgumentException tooMany =
        assertThrows(IllegalArgumentException.class, () -> FailureFilter.builder().taskIds(ids).build());
    assertTrue(tooMany.getMessage().startsWith("filter.task_ids"), tooMany.getMessage());
    assertEquals(List.of(), fake.requests);
  }

  @Test
  void pauseResumeCancelTheRedrivesNewestFirstAndPurge() {
    String first = client.failures()
        .redrive(FailureFilter.builder().taskIds(List.of("t-0")).build(), 1, false, "")
        .redrive()
        .orElseThrow()
        .id();
    String second = client.failures()
        .redrive(FailureFilter.builder().taskIds(List.of("t-1")).build(), 1, false, "")
        .redrive()
        .orElseThrow()
        .id();
    assertEquals(RedriveState.PAUSED, client.failures().pauseRedrive(first).state());
    assertEquals(RedriveState.RUNNING, client.failures().resumeRedrive(first).state());
    Redrive cancelled = client.failures().cancelRedrive(first);
    assertEquals(RedriveState.CANCELLED, cancelled.state());
    assertTrue(cancelled.state().isFinal());
    TaskyardException again = assertThrows(TaskyardException.class, () -> client.failures().cancelRedrive(first));
    assertEquals(Status.Code.FAILED_PRECONDITION, again.code());
    Page<Redrive> page = client.failures().redrives(1, "");
    assertEquals(List.of(second), page.items().stream().map(Redrive::id).toList());
    List<String> all = new ArrayList<>();
    client.failures().iterateRedrives(1).forEach(r -> all.add(r.id()));
    assertEquals(List.of(second, first), all);
    assertEquals(3, client.failures().purge(FailureFilter.group("g1"), true));
    assertTrue(fake.purges.get(0).getDryRun());
    assertEquals("g1", fake.purges.get(0).getFilter().getGroupId());
  }

  @Test
  void aTaskSaysItsDeadLetterReasonAndTheRedriveThatRequeuedIt() {
    TaskInfo task = client.get("t1");
    assertEquals(DeadLetterReason.QUARANTINED, task.deadLetterReason());
    assertEquals("r-1", task.redriveId());
    assertEquals(1, task.redrivenFromAttempt());
    assertEquals(
        List.of(List.of("g1", "r-1"), List.of("g1", "")),
        task.failures().stream().map(f -> List.of(f.groupId(), f.redriveId())).toList());
  }
}
