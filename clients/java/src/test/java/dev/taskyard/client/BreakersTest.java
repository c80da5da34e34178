package dev.taskyard.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskyard.v1.Task;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Circuit breakers in the client: a breaker limit, a breaker key on a submit, a throttled or refunded failure. */
class BreakersTest {
  private final LimitsTest.FakeLimits fake = new LimitsTest.FakeLimits();
  private final LimitsTest.EchoTasks tasks = new LimitsTest.EchoTasks();
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
  void aBreakerIsSentWithItsNumbersAndReadBack() {
    LimitSpec spec = LimitSpec.breaker("payments", 5)
        .window(Duration.ofSeconds(30))
        .minAttempts(8)
        .coolDown(Duration.ofSeconds(10))
        .halfOpenProbes(2)
        .perKey(true)
        .build();
    CircuitBreaker want = new CircuitBreaker(5, Duration.ofSeconds(30), 8, Duration.ofSeconds(10), 2);
    assertEquals(want, client.limits().create(spec).breaker().orElseThrow());
    dev.taskyard.v1.CircuitBreaker wire = fake.limits.get("payments").getBreaker();
    assertEquals(5, wire.getFailureThreshold());
    assertEquals(30, wire.getWindow().getSeconds());
    assertEquals(10, wire.getCoolDown().getSeconds());
    assertTrue(fake.limits.get("payments").getPerKey());
    LimitInfo got = client.limits().get("payments");
    assertEquals(want, got.breaker().orElseThrow());
    assertFalse(got.rate().isPresent());
    assertFalse(got.concurrency().isPresent());
    assertEquals(List.of(want), client.limits().stream(10).map(l -> l.breaker().orElseThrow()).toList());
    // Durations not given stay unset, so the gateway's defaults (60 s, 30 s) apply.
    LimitInfo updated = client.limits().update(LimitSpec.breaker("payments", 3).perKey(true).build());
    assertFalse(fake.limits.get("payments").getBreaker().hasWindow());
    assertFalse(fake.limits.get("payments").getBreaker().hasCoolDown());
    assertEquals(new CircuitBreaker(3, Duration.ZERO, 0, Duration.ZERO, 0), updated.breaker().orElseThrow());
  }

  @Test
  void aBreakersSettingsAreRefusedOnAnotherKind() {
    assertThrows(IllegalStateException.class, () -> LimitSpec.rate("r", 1, Duration.ofSeconds(1)).coolDown(Duration.ofSeconds(1)));
    assertThrows(IllegalStateException.class, () -> LimitSpec.concurrency("c", 1).halfOpenProbes(2));
    assertThrows(IllegalStateException.class, () -> LimitSpec.breaker("b", 1).burst(2));
  }

  @Test
  void aSubmitCarriesABreakerKey() {
    LimitUse use = LimitUse.of("payments", "payments-api");
    TaskInfo task = client.submit(TaskSpec.builder("charge").limits(List.of(use)).build()).task();
    assertEquals("payments", tasks.spec.getLimits(0).getLimit());
    assertEquals("payments-api", tasks.spec.getLimits(0).getKey());
    assertEquals(List.of(use), task.limits());
  }

  @Test
  void aFailureSaysThrottledRetryAfterAndRefunded() {
    dev.taskyard.v1.TaskFailure throttled = dev.taskyard.v1.TaskFailure.newBuilder()
        .setAttempt(2)
        .setType("RetryAfter")
        .setThrottled(true)
        .setRetryAfter(com.google.protobuf.Duration.newBuilder().setSeconds(2).setNanos(500_000_000))
        .build();
    TaskInfo task = TaskInfo.fromProto(Task.newBuilder()
        .setId("t1")
        .setFailure(throttled)
        .addFailures(dev.taskyard.v1.TaskFailure.newBuilder().setAttempt(1).setType("ConnectionError").setRefunded(true))
        .addFailures(throttled)
        .build());
    TaskFailure last = task.failure().orElseThrow();
    assertTrue(last.throttled());
    assertEquals(Duration.ofMillis(2500), last.retryAfter());
    assertFalse(last.refunded());
    TaskFailure first = task.failures().get(0);
    assertFalse(first.throttled());
    assertEquals(Duration.ZERO, first.retryAfter());
    assertTrue(first.refunded());
  }
}
