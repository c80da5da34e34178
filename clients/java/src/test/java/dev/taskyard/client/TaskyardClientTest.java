package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskyard.v1.CancelTaskRequest;
import dev.taskyard.v1.CancelTaskResponse;
import dev.taskyard.v1.GetTaskRequest;
import dev.taskyard.v1.GetTaskResponse;
import dev.taskyard.v1.ListTasksRequest;
import dev.taskyard.v1.ListTasksResponse;
import dev.taskyard.v1.RunTaskRequest;
import dev.taskyard.v1.RunTaskResponse;
import dev.taskyard.v1.Task;
import dev.taskyard.v1.TaskServiceGrpc;
import dev.taskyard.v1.WaitTaskRequest;
import dev.taskyard.v1.WaitTaskResponse;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The client against a fake TaskService on loopback. */
class TaskyardClientTest {
  /** Answers like the gateway where it matters here; counts the calls. */
  static final class FakeTasks extends TaskServiceGrpc.TaskServiceImplBase {
    final AtomicInteger waits = new AtomicInteger();
    final AtomicInteger cancels = new AtomicInteger();
    final AtomicInteger gets = new AtomicInteger();
    final List<String> reasons = new ArrayList<>();
    final List<RunTaskRequest> runs = new ArrayList<>();

    /** Answers "add" final at once (SUCCESS, 5); holds any other task as waitTask does, not final. */
    @Override
    public void runTask(RunTaskRequest req, StreamObserver<RunTaskResponse> out) {
      synchronized (runs) {
        runs.add(req);
      }
      Task.Builder task = Task.newBuilder().setId("r1").setName(req.getTask().getName());
      if (req.getTask().getName().equals("add")) {
        task.setState(dev.taskyard.v1.TaskState.TASK_STATE_SUCCESS)
            .setResult(com.google.protobuf.Value.newBuilder().setNumberValue(5));
        out.onNext(RunTaskResponse.newBuilder().setTask(task).setCreated(true).setFinal(true).build());
        out.onCompleted();
        return;
      }
      long hold = TimeUnit.SECONDS.toMillis(req.getTimeout().getSeconds()) + req.getTimeout().getNanos() / 1_000_000;
      Deadline deadline = Context.current().getDeadline();
      if (deadline != null) {
        hold = Math.max(0, Math.min(hold, deadline.timeRemaining(TimeUnit.MILLISECONDS) - 100));
      }
      try {
        Thread.sleep(hold);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      task.setState(dev.taskyard.v1.TaskState.TASK_STATE_RUNNING);
      out.onNext(RunTaskResponse.newBuilder().setTask(task).setCreated(true).build());
      out.onCompleted();
    }

    @Override
    public void waitTask(WaitTaskRequest req, StreamObserver<WaitTaskResponse> out) {
      waits.incrementAndGet();
      // Hold for the wait asked, but answer 100 ms before the caller's deadline.
      long hold = TimeUnit.SECONDS.toMillis(req.getTimeout().getSeconds()) + req.getTimeout().getNanos() / 1_000_000;
      Deadline deadline = Context.current().getDeadline();
      if (deadline != null) {
        hold = Math.max(0, Math.min(hold, deadline.timeRemaining(TimeUnit.MILLISECONDS) - 100));
      }
      try {
        Thread.sleep(hold);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Task task = Task.newBuilder().setId(req.getId()).setState(dev.taskyard.v1.TaskState.TASK_STATE_RUNNING).build();
      out.onNext(WaitTaskResponse.newBuilder().setTask(task).setTimedOut(true).build());
      out.onCompleted();
    }

    @Override
    public void cancelTask(CancelTaskRequest req, StreamObserver<CancelTaskResponse> out) {
      synchronized (reasons) {
        reasons.add(req.getReason());
      }
      if (cancels.incrementAndGet() == 1) {
        out.onError(Status.UNAVAILABLE.withDescription("connection lost after commit").asRuntimeException());
        return;
      }
      Task task = Task.newBuilder().setId(req.getId()).setState(dev.taskyard.v1.TaskState.TASK_STATE_CANCELLED).build();
      out.onNext(CancelTaskResponse.newBuilder().setTask(task).setCancelled(true).build());
      out.onCompleted();
    }

    @Override
    public void getTask(GetTaskRequest req, StreamObserver<GetTaskResponse> out) {
      if (gets.incrementAndGet() == 1) {
        out.onError(Status.UNAVAILABLE.withDescription("restarting").asRuntimeException());
        return;
      }
      out.onNext(GetTaskResponse.newBuilder().setTask(Task.newBuilder().setId(req.getId())).build());
      out.onCompleted();
    }

    @Override
    public void listTasks(ListTasksRequest req, StreamObserver<ListTasksResponse> out) {
      out.onNext(ListTasksResponse.newBuilder()
          .addTasks(Task.newBuilder().setId("t-" + req.getPageToken()))
          .setNextPageToken("stuck")
          .build());
      out.onCompleted();
    }
  }

  private final FakeTasks fake = new FakeTasks();
  private Server server;
  private TaskyardClient client;

  @BeforeEach
  void start() throws IOException {
    server = ServerBuilder.forPort(0).addService(fake).build().start();
    client = TaskyardClient.builder("127.0.0.1:" + server.getPort()).plaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    client.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void aWaitStopsWhenTheDeadlineIsTooCloseToAskAgain() {
    TaskyardException e = assertThrows(
        TaskyardException.class,
        () -> client.withDeadline(Duration.ofMillis(300)).await("t1", Duration.ofSeconds(10)));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
    int calls = fake.waits.get();
    assertTrue(calls >= 1 && calls <= 2, calls + " WaitTask calls");
  }

  @Test
  void aRunReturnsTheFinalTaskInOneCall() {
    RunResult done = client.run("add", 2, 3);
    assertFalse(done.timedOut());
    assertTrue(done.created());
    assertEquals(TaskState.SUCCESS, done.task().state());
    assertEquals(5, ((Number) done.task().result()).intValue());
    RunTaskRequest sent = fake.runs.get(0);
    assertEquals(30, sent.getTimeout().getSeconds());
    assertFalse(sent.getTask().getRequestId().isEmpty());
    assertEquals(0, fake.waits.get());
  }

  @Test
  void aTimedOutRunIsAResultNotAnError() {
    RunResult slow = client.run(TaskSpec.of("sleep", 30), Duration.ofMillis(200));
    assertTrue(slow.timedOut());
    assertFalse(slow.task().state().isFinal());
    assertEquals("r1", slow.task().id());
    assertEquals(200_000_000, fake.runs.get(0).getTimeout().getNanos());
    assertThrows(IllegalArgumentException.class, () -> client.run(TaskSpec.of("sleep", 30), Duration.ofMillis(-1)));
  }

  @Test
  void readsAreRetriedButACancelIsNot() {
    assertEquals("t1", client.get("t1").id());
    assertEquals(2, fake.gets.get());
    TaskyardException e = assertThrows(TaskyardException.class, () -> client.cancel("t1", null));
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertEquals(1, fake.cancels.get());
    assertEquals(List.of(""), fake.reasons);
  }

  @Test
  void theRetriedMethodsAreTheReadsAndTheSubmits() {
    assertEquals(
        List.of(
            "TaskService/SubmitTask", "TaskService/BatchSubmitTasks", "TaskService/RunTask", "TaskService/GetTask",
            "TaskService/WaitTask", "TaskService/ListTasks", "TaskService/GetTaskTree",
            "TaskService/ExplainTask", "TaskService/GetTaskLogs", "TaskService/StreamTaskLogs",
            "QueueService/GetQueueStatus", "QueueService/ListServers",
            "ScheduleService/GetSchedule", "ScheduleService/ListSchedules",
            "LimitService/GetLimit", "LimitService/ListLimits", "LimitService/ListKeyWeights",
            "FailureService/ListFailureGroups", "FailureService/ListFailures", "FailureService/GetRedrive",
            "FailureService/ListRedrives", "FailureService/ListRedriveItems",
            "TenantService/GetTenant", "TenantService/ListTenants"),
        RetryPolicy.RETRIED);
    assertFalse(RetryPolicy.serviceConfig().toString().contains("CancelTask"));
  }

  @Test
  void paginationStopsOnAPageTokenThatPointsBackAtItself() {
    Iterator<TaskInfo> tasks = client.iterate(TaskQuery.builder().build()).iterator();
    assertEquals("t-", tasks.next().id());
    assertEquals("t-stuck", tasks.next().id());
    IllegalStateException e = assertThrows(IllegalStateException.class, tasks::hasNext);
    assertTrue(e.getMessage().contains("stuck"), e.getMessage());
  }
}
