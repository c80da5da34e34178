package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.ErrorInfo;
import dev.taskyard.v1.CreateLimitRequest;
import dev.taskyard.v1.CreateLimitResponse;
import dev.taskyard.v1.DeleteLimitRequest;
import dev.taskyard.v1.DeleteLimitResponse;
import dev.taskyard.v1.GetLimitRequest;
import dev.taskyard.v1.GetLimitResponse;
import dev.taskyard.v1.Limit;
import dev.taskyard.v1.LimitServiceGrpc;
import dev.taskyard.v1.ListKeyWeightsRequest;
import dev.taskyard.v1.ListKeyWeightsResponse;
import dev.taskyard.v1.ListLimitsRequest;
import dev.taskyard.v1.ListLimitsResponse;
import dev.taskyard.v1.SetKeyWeightRequest;
import dev.taskyard.v1.SetKeyWeightResponse;
import dev.taskyard.v1.SubmitTaskRequest;
import dev.taskyard.v1.SubmitTaskResponse;
import dev.taskyard.v1.Task;
import dev.taskyard.v1.TaskServiceGrpc;
import dev.taskyard.v1.UpdateLimitRequest;
import dev.taskyard.v1.UpdateLimitResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Flow control in the client: limit uses on a submit, and {@link Limits} against a fake LimitService. */
class LimitsTest {
  /** Keeps limits by name and weights by key; lists one limit a page, the token being the next name. */
  static final class FakeLimits extends LimitServiceGrpc.LimitServiceImplBase {
    final Map<String, Limit> limits = new TreeMap<>();
    final List<DeleteLimitRequest> deletes = new ArrayList<>();
    final List<dev.taskyard.v1.KeyWeight> weights = new ArrayList<>();

    @Override
    public synchronized void createLimit(CreateLimitRequest req, StreamObserver<CreateLimitResponse> out) {
      if (limits.putIfAbsent(req.getLimit().getName(), req.getLimit()) != null) {
        out.onError(Status.ALREADY_EXISTS.withDescription("taken").asRuntimeException());
        return;
      }
      out.onNext(CreateLimitResponse.newBuilder().setLimit(req.getLimit()).build());
      out.onCompleted();
    }

    @Override
    public synchronized void getLimit(GetLimitRequest req, StreamObserver<GetLimitResponse> out) {
      Limit limit = limits.get(req.getName());
      if (limit == null) {
        com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
            .setCode(Code.NOT_FOUND_VALUE)
            .setMessage("no limit named " + req.getName())
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("LIMIT_NOT_FOUND").setDomain("taskyard.dev").build()))
            .build();
        out.onError(StatusProto.toStatusRuntimeException(st));
        return;
      }
      dev.taskyard.v1.LimitUsage usage = dev.taskyard.v1.LimitUsage.newBuilder()
          .setUnitsInUse(2)
          .setWaiting(5)
          .setKeys(1)
          .addBusiestKeys(dev.taskyard.v1.KeyUsage.newBuilder().setKey("customer:42").setUnitsInUse(2).setWaiting(5))
          .build();
      out.onNext(GetLimitResponse.newBuilder().setLimit(limit.toBuilder().setUsage(usage)).build());
      out.onCompleted();
    }

    @Override
    public synchronized void listLimits(ListLimitsRequest req, StreamObserver<ListLimitsResponse> out) {
      List<String> names = limits.keySet().stream().filter(n -> n.compareTo(req.getPageToken()) >= 0).toList();
      ListLimitsResponse.Builder resp = ListLimitsResponse.newBuilder();
      if (!names.isEmpty()) {
        resp.addLimits(limits.get(names.get(0)));
      }
      if (names.size() > 1) {
        resp.setNextPageToken(names.get(1));
      }
      out.onNext(resp.build());
      out.onCompleted();
    }

    @Override
    public synchronized void updateLimit(UpdateLimitRequest req, StreamObserver<UpdateLimitResponse> out) {
      limits.put(req.getLimit().getName(), req.getLimit());
      out.onNext(UpdateLimitResponse.newBuilder().setLimit(req.getLimit()).build());
      out.onCompleted();
    }

    @Override
    public synchronized void deleteLimit(DeleteLimitRequest req, StreamObserver<DeleteLimitResponse> out) {
      deletes.add(req);
      if (!req.getForce()) {
        out.onError(Status.FAILED_PRECONDITION.withDescription("3 tasks use it").asRuntimeException());
        return;
      }
      out.onNext(DeleteLimitResponse.newBuilder().setTasksReleased(3).build());
      out.onCompleted();
    }

    @Override
    public synchronized void setKeyWeight(SetKeyWeightRequest req, StreamObserver<SetKeyWeightResponse> out) {
      weights.add(req.getWeight());
      out.onNext(SetKeyWeightResponse.newBuilder().setWeight(req.getWeight()).build());
      out.onCompleted();
    }

    @Override
    public synchronized void listKeyWeights(ListKeyWeightsRequest req, StreamObserver<ListKeyWeightsResponse> out) {
      out.onNext(ListKeyWeightsResponse.newBuilder().addAllWeights(weights).build());
      out.onCompleted();
    }
  }

  /** Answers a submit with the task as its spec describes it. */
  static final class EchoTasks extends TaskServiceGrpc.TaskServiceImplBase {
    volatile dev.taskyard.v1.TaskSpec spec;

    @Override
    public void submitTask(SubmitTaskRequest req, StreamObserver<SubmitTaskResponse> out) {
      spec = req.getTask();
      Task task = Task.newBuilder()
          .setId("t1")
          .setName(spec.getName())
          .addAllLimits(spec.getLimitsList())
          .setFairnessKey(spec.getFairnessKey())
          .build();
      out.onNext(SubmitTaskResponse.newBuilder().setTask(task).setCreated(true).build());
      out.onCompleted();
    }
  }

  private final FakeLimits fake = new FakeLimits();
  private final EchoTasks tasks = new EchoTasks();
  private Server server;
  private TaskyardClient client;

  @BeforeEach
  void start() throws IOException {
    server = ServerBuilder.forPort(0).addService(fake).addService(tasks).build().start();
    client = TaskyardClient.builder("127.0.0.1:" + server.getPort()).plaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    client.close();
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  @Test
  void aSubmitCarriesLimitUsesAndTheFairnessKey() {
    List<LimitUse> uses = List.of(new LimitUse("stripe", "customer:42", 2), LimitUse.of("global", ""));
    TaskInfo task = client.submit(
            TaskSpec.builder("charge").limits(uses).fairnessKey("customer:42").build())
        .task();
    assertEquals(2, tasks.spec.getLimitsCount());
    assertEquals("customer:42", tasks.spec.getLimits(0).getKey());
    assertEquals(2, tasks.spec.getLimits(0).getUnits());
    assertEquals("customer:42", tasks.spec.getFairnessKey());
    assertEquals(uses, task.limits());
    assertEquals("customer:42", task.fairnessKey());
    client.submit(TaskSpec.of("plain"));
    assertEquals(0, tasks.spec.getLimitsCount());
    assertEquals("", tasks.spec.getFairnessKey());
  }

  @Test
  void createGetAndUpdate() {
    LimitInfo made = client.limits()
        .create(LimitSpec.rate("stripe", 100, Duration.ofSeconds(1)).burst(20).description("quota").build());
    assertEquals(new RateLimit(100, Duration.ofSeconds(1), 20), made.rate().orElseThrow());
    assertFalse(made.concurrency().isPresent());
    assertEquals("quota", fake.limits.get("stripe").getDescription());
    client.limits().create(LimitSpec.concurrency("per-customer", 3).perKey(true).build());
    LimitInfo got = client.limits().get("per-customer");
    assertEquals(new ConcurrencyLimit(3), got.concurrency().orElseThrow());
    assertTrue(got.perKey());
    LimitUsage usage = got.usage().orElseThrow();
    assertEquals(2, usage.unitsInUse());
    assertEquals(5, usage.waiting());
    assertEquals(List.of(new KeyUsage("customer:42", 2, 5)), usage.busiestKeys());
    LimitInfo updated = client.limits().update(LimitSpec.rate("stripe", 50, Duration.ofMinutes(1)).build());
    assertEquals(new RateLimit(50, Duration.ofMinutes(1), 0), updated.rate().orElseThrow());
    TaskyardException taken = assertThrows(
        TaskyardException.class, () -> client.limits().create(LimitSpec.concurrency("stripe", 1).build()));
    assertEquals(Status.Code.ALREADY_EXISTS, taken.code());
    TaskyardException missing = assertThrows(TaskyardException.class, () -> client.limits().get("nope"));
    assertEquals(Status.Code.NOT_FOUND, missing.code());
    assertEquals("LIMIT_NOT_FOUND", missing.reason());
    assertThrows(IllegalStateException.class, () -> LimitSpec.concurrency("c", 1).burst(2));
  }

  @Test
  void iterationFollowsPageTokens() {
    for (String name : List.of("c", "a", "b")) {
      client.limits().create(LimitSpec.concurrency(name, 1).build());
    }
    LimitPage page = client.limits().list(1, "");
    assertEquals(List.of("a"), page.limits().stream().map(LimitInfo::name).toList());
    assertEquals("b", page.nextPageToken());
    List<String> names = new ArrayList<>();
    client.limits().iterate(1).forEach(l -> names.add(l.name()));
    assertEquals(List.of("a", "b", "c"), names);
    assertEquals(List.of("a", "b", "c"), client.limits().stream(1).map(LimitInfo::name).toList());
  }

  @Test
  void deleteWithForceAndKeyWeights() {
    TaskyardException busy = assertThrows(TaskyardException.class, () -> client.limits().delete("busy", false));
    assertEquals(Status.Code.FAILED_PRECONDITION, busy.code());
    assertEquals(3, client.limits().delete("busy", true));
    assertEquals(List.of(false, true), fake.deletes.stream().map(DeleteLimitRequest::getForce).toList());
    assertEquals(new KeyWeight("customer:42", 3), client.limits().setKeyWeight("customer:42", 3));
    assertEquals(List.of(new KeyWeight("customer:42", 3)), client.limits().listKeyWeights());
  }
}
