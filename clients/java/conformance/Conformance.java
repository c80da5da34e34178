// The client conformance scenarios (clients/conformance/README.md) for the Java client.
// One file: Java 17's source launcher runs a single source file, so the scenarios cannot be split.
// Run after the build: clients/java/run conformance/Conformance.java (or clients/java/run-conformance).

import dev.taskyard.client.BatchEntry;
import dev.taskyard.client.CancelResult;
import dev.taskyard.client.CircuitBreaker;
import dev.taskyard.client.DeadLetter;
import dev.taskyard.client.DeadLetterReason;
import dev.taskyard.client.FailureFilter;
import dev.taskyard.client.FailureGroup;
import dev.taskyard.client.Failures;
import dev.taskyard.client.FieldViolation;
import dev.taskyard.client.LimitInfo;
import dev.taskyard.client.LimitSpec;
import dev.taskyard.client.LimitUse;
import dev.taskyard.client.Limits;
import dev.taskyard.client.Priority;
import dev.taskyard.client.Redrive;
import dev.taskyard.client.RedriveItem;
import dev.taskyard.client.RedriveOutcome;
import dev.taskyard.client.RedriveState;
import dev.taskyard.client.RunResult;
import dev.taskyard.client.Submission;
import dev.taskyard.client.TaskInfo;
import dev.taskyard.client.TaskPage;
import dev.taskyard.client.TaskQuery;
import dev.taskyard.client.TaskSpec;
import dev.taskyard.client.TaskState;
import dev.taskyard.client.TaskyardClient;
import dev.taskyard.client.TaskyardException;
import dev.taskyard.client.TenantInfo;
import dev.taskyard.client.TenantSpec;
import dev.taskyard.client.WaitResult;
import io.grpc.Status;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

public class Conformance {
  static final String TARGET = env("TASKYARD_TARGET");
  static final String TOKEN = env("TASKYARD_TOKEN");
  static final String READ_TOKEN = env("TASKYARD_READ_TOKEN");
  static final String CLOSED_TARGET = env("TASKYARD_CLOSED_TARGET");
  static final Duration WAIT = Duration.ofSeconds(30);

  interface Scenario {
    void run(TaskyardClient client) throws Exception;
  }

  /** A scenario's expectation that did not hold. */
  static final class Mismatch extends RuntimeException {
    Mismatch(String what) {
      super(what);
    }
  }

  public static void main(String[] args) {
    Map<String, Scenario> scenarios = new LinkedHashMap<>();
    scenarios.put("submit_and_wait", Conformance::submitAndWait);
    scenarios.put("submit_options", Conformance::submitOptions);
    scenarios.put("batch", Conformance::batch);
    scenarios.put("get", Conformance::get);
    scenarios.put("wait_timeout", Conformance::waitTimeout);
    scenarios.put("list_pages", Conformance::listPages);
    scenarios.put("cancel_queued", Conformance::cancelQueued);
    scenarios.put("cancel_running", Conformance::cancelRunning);
    scenarios.put("idempotent_resubmit", Conformance::idempotentResubmit);
    scenarios.put("error_invalid_argument", Conformance::errorInvalidArgument);
    scenarios.put("error_unknown_task", Conformance::errorUnknownTask);
    scenarios.put("error_not_found", Conformance::errorNotFound);
    scenarios.put("error_already_final", Conformance::errorAlreadyFinal);
    scenarios.put("error_unauthenticated", Conformance::errorUnauthenticated);
    scenarios.put("error_permission_denied", Conformance::errorPermissionDenied);
    scenarios.put("error_resource_exhausted", Conformance::errorResourceExhausted);
    scenarios.put("error_deadline", Conformance::errorDeadline);
    scenarios.put("error_unavailable", Conformance::errorUnavailable);
    scenarios.put("task_failure", Conformance::taskFailure);
    scenarios.put("submit_with_limit_key", Conformance::submitWithLimitKey);
    scenarios.put("unknown_limit_refused", Conformance::unknownLimitRefused);
    scenarios.put("run_task", Conformance::runTask);
    scenarios.put("redrive_dead_letters", Conformance::redriveDeadLetters);
    scenarios.put("breaker_limit", Conformance::breakerLimit);
    scenarios.put("tenant_isolation", Conformance::tenantIsolation);

    int passed = 0;
    try (TaskyardClient client = client(TARGET, TOKEN)) {
      for (Map.Entry<String, Scenario> s : scenarios.entrySet()) {
        try {
          s.getValue().run(client);
          System.out.println("PASS " + s.getKey());
          passed++;
        } catch (Mismatch m) {
          System.out.println("FAIL " + s.getKey() + ": " + m.getMessage());
        } catch (Throwable t) {
          System.out.println("FAIL " + s.getKey() + ": " + t.getClass().getSimpleName() + ": " + t.getMessage());
        }
        System.out.flush();
      }
    }
    System.out.println("java conformance: " + passed + "/" + scenarios.size() + " passed");
    System.exit(passed == scenarios.size() ? 0 : 1);
  }

  // --- scenarios --------------------------------------------------------------------------

  static void submitAndWait(TaskyardClient c) {
    Submission s = c.submit("add", 2, 3);
    check(!s.task().id().isEmpty(), "empty id");
    check(s.created(), "created is false");
    WaitResult done = c.await(s.task().id(), WAIT);
    expectEqual(TaskState.SUCCESS, done.task().state(), "state");
    expectEqual(5L, done.task().result(), "result");
  }

  static void submitOptions(TaskyardClient c) {
    TaskSpec spec = TaskSpec.builder("echo")
        .args("x")
        .priority(Priority.HIGH)
        .queue("default")
        .label("suite", "conformance")
        .maxRetries(0)
        .timeout(Duration.ofSeconds(30))
        .build();
    TaskInfo t = c.get(c.submit(spec).task().id());
    expectEqual("echo", t.name(), "name");
    expectEqual(Priority.HIGH, t.priority(), "priority");
    expectEqual("default", t.queue(), "queue");
    expectEqual("conformance", t.labels().get("suite"), "label suite");
    expectEqual(0, t.maxRetries(), "max_retries");
    expectEqual(java.util.Optional.of(Duration.ofSeconds(30)), t.timeout(), "timeout");
  }

  static void batch(TaskyardClient c) {
    List<TaskSpec> specs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      specs.add(TaskSpec.of("add", i, i));
    }
    List<BatchEntry> entries = c.submitBatch(specs);
    expectEqual(5, entries.size(), "replies");
    Set<String> ids = new HashSet<>();
    List<Object> results = new ArrayList<>();
    for (BatchEntry e : entries) {
      check(e.created(), "not created: " + e.id());
      ids.add(e.id());
    }
    expectEqual(5, ids.size(), "distinct ids");
    for (BatchEntry e : entries) {
      results.add(c.await(e.id(), WAIT).task().result());
    }
    expectEqual(List.of(0L, 2L, 4L, 6L, 8L), results, "results");
  }

  static void get(TaskyardClient c) {
    String id = c.submit("add", 2, 3).task().id();
    TaskInfo t = c.get(id);
    expectEqual(id, t.id(), "id");
    expectEqual("add", t.name(), "name");
    expectEqual(List.of(2L, 3L), t.args(), "args");
  }

  static void waitTimeout(TaskyardClient c) {
    String id = c.submit("sleep", 30).task().id();
    try {
      WaitResult w = c.await(id, Duration.ofMillis(300));
      check(w.timedOut(), "timed-out flag not set");
      check(!w.task().isFinal(), "task is final: " + w.task().state());
    } catch (RuntimeException e) {
      cancelQuietly(c, id);
      throw e;
    }
    c.cancel(id, "conformance", Duration.ofSeconds(15));
  }

  static void runTask(TaskyardClient c) {
    RunResult done = c.run(TaskSpec.of("add", 2, 3), WAIT);
    check(!done.task().id().isEmpty(), "empty id");
    check(done.created(), "created is false");
    check(!done.timedOut(), "timed out");
    expectEqual(TaskState.SUCCESS, done.task().state(), "state");
    expectEqual(5L, done.task().result(), "result");
    RunResult slow = c.run(TaskSpec.of("sleep", 30), Duration.ofMillis(300));
    String id = slow.task().id();
    try {
      check(!id.isEmpty(), "empty id");
      check(slow.timedOut(), "timed-out flag not set");
      check(!slow.task().isFinal(), "task is final: " + slow.task().state());
    } finally {
      cancelQuietly(c, id);
    }
  }

  static void listPages(TaskyardClient c) {
    String marker = "conformance-" + UUID.randomUUID();
    Set<String> mine = new HashSet<>();
    for (int i = 0; i < 5; i++) {
      mine.add(c.submit("echo", marker).task().id());
    }
    for (String id : mine) {
      expectEqual(TaskState.SUCCESS, c.await(id, WAIT).task().state(), "state of " + id);
    }
    TaskQuery query = TaskQuery.builder().name("echo").states(TaskState.SUCCESS).pageSize(2).build();
    TaskPage page = c.list(query);
    expectEqual(2, page.tasks().size(), "tasks on the first page");
    check(page.hasNextPage(), "no next-page token");
    Set<String> seen = new HashSet<>();
    for (TaskInfo t : c.iterate(query)) {
      check(seen.add(t.id()), "id twice: " + t.id());
    }
    check(seen.containsAll(mine), "the iteration missed some of the five tasks");
  }

  static void cancelQueued(TaskyardClient c) {
    Submission s = c.submit(TaskSpec.builder("add").args(1, 1).countdown(Duration.ofHours(1)).build());
    expectEqual(TaskState.SCHEDULED, s.task().state(), "state at submission");
    CancelResult r = c.cancel(s.task().id());
    check(r.cancelled(), "not reported cancelled");
    expectEqual(TaskState.CANCELLED, r.task().state(), "state after cancel");
    expectEqual(TaskState.CANCELLED, c.get(s.task().id()).state(), "state on get");
  }

  static void cancelRunning(TaskyardClient c) throws InterruptedException {
    String id = c.submit("sleep", 30).task().id();
    try {
      long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
      TaskState state = c.get(id).state();
      while (state != TaskState.RUNNING && System.nanoTime() < until) {
        Thread.sleep(50);
        state = c.get(id).state();
      }
      expectEqual(TaskState.RUNNING, state, "state before cancel");
      CancelResult r = c.cancel(id, "conformance", Duration.ofSeconds(15));
      expectEqual(TaskState.CANCELLED, r.task().state(), "state after cancel");
      check(r.cancelled(), "not reported cancelled");
    } catch (RuntimeException e) {
      cancelQuietly(c, id);
      throw e;
    }
  }

  static void idempotentResubmit(TaskyardClient c) {
    String requestId = UUID.randomUUID().toString();
    TaskSpec spec = TaskSpec.builder("add").args(4, 4).requestId(requestId).build();
    Submission first = c.submit(spec);
    Submission second = c.submit(spec);
    expectEqual(first.task().id(), second.task().id(), "task id of the resubmit");
    check(first.created(), "first submit not created");
    check(!second.created(), "second submit created");
    String id = c.submit("add", 5, 5).task().id();
    check(!c.get(id).requestId().isEmpty(), "no request_id made by the client");
  }

  static void errorInvalidArgument(TaskyardClient c) {
    TaskyardException e = expectError(Status.Code.INVALID_ARGUMENT, () -> c.submit(TaskSpec.of("")));
    expectEqual("taskyard.dev", e.domain(), "domain");
    check(hasViolation(e, "task.name"), "no violation on task.name: " + e.violations());
    String requestId = UUID.randomUUID().toString();
    TaskSpec good = TaskSpec.builder("add").args(1, 2).requestId(requestId).build();
    TaskyardException b = expectError(Status.Code.INVALID_ARGUMENT, () -> c.submitBatch(List.of(good, TaskSpec.of(""))));
    check(hasViolation(b, "tasks[1].name"), "no violation on tasks[1].name: " + b.violations());
    // Its valid entry was not written: its request id is still unused.
    check(c.submit(good).created(), "the batch's valid task was created");
  }

  static void errorUnknownTask(TaskyardClient c) {
    TaskyardException e = expectError(Status.Code.INVALID_ARGUMENT, () -> c.submit("no_such_task_conformance"));
    expectEqual("UNKNOWN_TASK_NAME", e.reason(), "reason");
  }

  static void errorNotFound(TaskyardClient c) {
    TaskyardException e = expectError(Status.Code.NOT_FOUND, () -> c.get(UUID.randomUUID().toString()));
    expectEqual("TASK_NOT_FOUND", e.reason(), "reason");
  }

  static void errorAlreadyFinal(TaskyardClient c) {
    String id = c.submit("add", 1, 1).task().id();
    expectEqual(TaskState.SUCCESS, c.await(id, WAIT).task().state(), "state");
    TaskyardException e = expectError(Status.Code.FAILED_PRECONDITION, () -> c.cancel(id));
    expectEqual("TASK_ALREADY_FINAL", e.reason(), "reason");
  }

  static void errorUnauthenticated(TaskyardClient c) {
    String id = UUID.randomUUID().toString();
    try (TaskyardClient none = client(TARGET, null)) {
      TaskyardException e = expectError(Status.Code.UNAUTHENTICATED, () -> none.get(id));
      expectEqual("TOKEN_MISSING", e.reason(), "reason without a token");
    }
    try (TaskyardClient bad = client(TARGET, "not-a-valid-token-0000")) {
      TaskyardException e = expectError(Status.Code.UNAUTHENTICATED, () -> bad.get(id));
      expectEqual("TOKEN_INVALID", e.reason(), "reason with a bad token");
    }
  }

  static void errorPermissionDenied(TaskyardClient c) {
    String id = c.submit("add", 1, 1).task().id();
    try (TaskyardClient reader = client(TARGET, READ_TOKEN)) {
      TaskyardException e = expectError(Status.Code.PERMISSION_DENIED, () -> reader.submit("add", 1, 1));
      expectEqual("SCOPE_MISSING", e.reason(), "reason");
      expectEqual(id, reader.get(id).id(), "id read with the read token");
    }
  }

  static void errorResourceExhausted(TaskyardClient c) {
    String big = "x".repeat(5 * 1024 * 1024);
    expectError(Status.Code.RESOURCE_EXHAUSTED, () -> c.submit("echo", big));
  }

  static void errorDeadline(TaskyardClient c) {
    String id = c.submit("sleep", 30).task().id();
    try {
      expectError(
          Status.Code.DEADLINE_EXCEEDED, () -> c.withDeadline(Duration.ofMillis(300)).await(id, Duration.ofSeconds(10)));
    } catch (RuntimeException e) {
      cancelQuietly(c, id);
      throw e;
    }
    c.cancel(id, "conformance", Duration.ofSeconds(15));
  }

  static void errorUnavailable(TaskyardClient c) {
    long start = System.nanoTime();
    try (TaskyardClient closed = client(CLOSED_TARGET, TOKEN)) {
      expectError(Status.Code.UNAVAILABLE, () -> closed.get(UUID.randomUUID().toString()));
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    check(took.compareTo(Duration.ofSeconds(10)) <= 0, "UNAVAILABLE took " + took);
  }

  static void taskFailure(TaskyardClient c) {
    String id = c.submit(TaskSpec.builder("fail").args("boom-conformance").maxRetries(0).build()).task().id();
    TaskInfo t = c.await(id, WAIT).task();
    expectEqual(TaskState.FAILURE, t.state(), "state");
    String message = t.failure().map(f -> f.message()).orElse("");
    check(message.contains("boom-conformance"), "failure message: " + message);
  }

  static void redriveDeadLetters(TaskyardClient c) throws InterruptedException {
    String adminToken = System.getenv("TASKYARD_ADMIN_TOKEN");
    check(adminToken != null && !adminToken.isEmpty(), "TASKYARD_ADMIN_TOKEN is not set (clients/conformance/README.md)");
    try (TaskyardClient admin = client(TARGET, adminToken)) {
      Failures failures = admin.failures();
      // Letters g-z only: a fingerprint masks numbers and hex ids, and keeps these.
      SecureRandom random = new SecureRandom();
      StringBuilder marker = new StringBuilder();
      for (int i = 0; i < 12; i++) {
        marker.append("ghijklmnopqrstuvwxyz".charAt(random.nextInt(20)));
      }
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        TaskSpec spec = TaskSpec.builder("fail").args("conformance redrive " + marker).maxRetries(0).build();
        ids.add(c.submit(spec).task().id());
      }
      Set<String> groups = new HashSet<>();
      for (String id : ids) {
        c.await(id, WAIT);
        TaskInfo t = c.get(id);
        expectEqual(TaskState.FAILURE, t.state(), id + " state");
        expectEqual(DeadLetterReason.RETRIES_EXHAUSTED, t.deadLetterReason(), id + " dead letter reason");
        String group = t.failure().map(f -> f.groupId()).orElse("");
        check(!group.isEmpty(), id + ": its failure has no group");
        groups.add(group);
      }
      expectEqual(1, groups.size(), "groups of the three failures " + groups);
      String group = groups.iterator().next();
      long count = -1;
      for (FailureGroup g : failures.iterateGroups(FailureFilter.builder().name("fail").build(), 0)) {
        if (g.groupId().equals(group)) {
          count = g.count();
        }
      }
      expectEqual(3L, count, "count of group " + group + " among the groups of fail");
      FailureFilter only = FailureFilter.group(group);
      List<String> listed = new ArrayList<>();
      for (DeadLetter d : failures.iterate(only, 0)) {
        listed.add(d.taskId());
      }
      expectEqual(new HashSet<>(ids), new HashSet<>(listed), "the group's failures");
      expectEqual(3, listed.size(), "the group's failures " + listed);
      var dry = failures.redrive(only, 100, true, "");
      expectEqual(3L, dry.matched(), "dry run matched");
      expectEqual(3, dry.sample().size(), "dry run sample");
      check(dry.redrive().isEmpty(), "a dry run answered a redrive");
      TaskInfo first = c.get(ids.get(0));
      check(first.state() == TaskState.FAILURE && first.attempt() == 1, "after the dry run: " + first.state());
      Redrive r = failures.redrive(only, 100, false, marker.toString()).redrive().orElseThrow();
      check(
          !r.id().isEmpty() && r.matched() == 3 && !r.createdBy().isEmpty() && r.note().equals(marker.toString()),
          "redrive " + r);
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (r.state() != RedriveState.DONE) {
        check(System.nanoTime() < deadline, "redrive " + r.id() + " is " + r.state() + " after 30 s");
        Thread.sleep(100);
        r = failures.getRedrive(r.id());
      }
      check(r.requeued() == 3 && r.skipped() == 0 && r.finishedAt().isPresent(), "done redrive " + r);
      String rid = r.id();
      check(
          failures.redrives(0, "").items().stream().anyMatch(x -> x.id().equals(rid)),
          "redrive " + rid + " is not on the first page of redrives");
      List<String> items = new ArrayList<>();
      for (RedriveItem item : failures.iterateRedriveItems(rid, 0)) {
        check(
            item.outcome() == RedriveOutcome.REQUEUED && item.failedAttempt() == 1 && item.newAttempt() == 2,
            "item " + item + ", want REQUEUED from attempt 1 to 2");
        items.add(item.taskId());
      }
      expectEqual(new HashSet<>(ids), new HashSet<>(items), "the redrive's items");
      for (String id : ids) {
        TaskInfo again = c.await(id, WAIT).task();
        check(
            again.state() == TaskState.FAILURE
                && again.attempt() == 2
                && again.redriveId().equals(rid)
                && again.redrivenFromAttempt() == 1,
            id + " did not run again from the redrive: " + again.state() + " attempt " + again.attempt()
                + " redrive \"" + again.redriveId() + "\" from attempt " + again.redrivenFromAttempt());
      }
    }
  }

  static void submitWithLimitKey(TaskyardClient c) {
    String limit = System.getenv("TASKYARD_LIMIT");
    check(limit != null && !limit.isEmpty(), "TASKYARD_LIMIT is not set (clients/conformance/README.md)");
    LimitUse use = new LimitUse(limit, "customer:42", 1);
    String id = c.submit(TaskSpec.builder("echo").args("x").limit(use).fairnessKey("customer:42").build())
        .task()
        .id();
    TaskInfo t = c.get(id);
    check(t.limits().contains(use), "limits " + t.limits() + ", want them to hold " + use);
    expectEqual("customer:42", t.fairnessKey(), "fairness key");
    expectEqual(TaskState.SUCCESS, c.await(id, WAIT).task().state(), "state");
  }

  static void unknownLimitRefused(TaskyardClient c) {
    String requestId = UUID.randomUUID().toString();
    TaskSpec.Builder spec = TaskSpec.builder("echo").args("x").requestId(requestId);
    TaskyardException e = expectError(
        Status.Code.INVALID_ARGUMENT,
        () -> c.submit(spec.limit(new LimitUse("no-such-limit", "customer:42", 0)).build()));
    expectEqual("UNKNOWN_LIMIT", e.reason(), "reason");
    check(
        e.violations().stream()
            .anyMatch(v -> v.field().equals("task.limits[0].limit") && v.reason().equals("UNKNOWN_LIMIT")),
        "no violation on task.limits[0].limit with reason UNKNOWN_LIMIT: " + e.violations());
    // Its request id is still unused: the refused task was not written.
    check(c.submit(spec.limits(List.of()).build()).created(), "the refused submit's task was created");
  }

  static void breakerLimit(TaskyardClient c) {
    String adminToken = System.getenv("TASKYARD_ADMIN_TOKEN");
    check(adminToken != null && !adminToken.isEmpty(), "TASKYARD_ADMIN_TOKEN is not set (clients/conformance/README.md)");
    try (TaskyardClient admin = client(TARGET, adminToken)) {
      Limits limits = admin.limits();
      // The four runners share one suite: each makes a breaker of its own.
      String name = "conformance-breaker-" + UUID.randomUUID().toString().substring(0, 8);
      limits.create(LimitSpec.breaker(name, 5)
          .window(Duration.ofSeconds(30))
          .minAttempts(8)
          .coolDown(Duration.ofSeconds(10))
          .halfOpenProbes(2)
          .perKey(true)
          .build());
      LimitInfo got = limits.get(name);
      expectEqual(
          java.util.Optional.of(new CircuitBreaker(5, Duration.ofSeconds(30), 8, Duration.ofSeconds(10), 2)),
          got.breaker(),
          "the breaker read back");
      check(got.perKey(), "not per key");
      check(got.rate().isEmpty() && got.concurrency().isEmpty(), "a breaker with another kind: " + got.proto());
      LimitUse use = LimitUse.of(name, "payments-api");
      Submission s = c.submit(TaskSpec.builder("echo").args("x").limit(use).build());
      check(s.created(), "task " + s.task().id() + " not created");
      TaskInfo t = c.get(s.task().id());
      check(
          t.limits().stream().anyMatch(u -> u.limit().equals(name) && u.key().equals("payments-api")),
          "limits " + t.limits() + ", want them to hold " + name + " with key payments-api");
      expectEqual(TaskState.SUCCESS, c.await(s.task().id(), WAIT).task().state(), "state");
      Map<String, LimitSpec> bad = new LinkedHashMap<>();
      bad.put("limit.breaker.failure_threshold", LimitSpec.breaker(name + "-refused", 0).build());
      bad.put("limit.breaker.half_open_probes", LimitSpec.breaker(name + "-refused", 5).halfOpenProbes(1001).build());
      for (Map.Entry<String, LimitSpec> b : bad.entrySet()) {
        TaskyardException e = expectError(Status.Code.INVALID_ARGUMENT, () -> limits.create(b.getValue()));
        check(hasViolation(e, b.getKey()), "no violation on " + b.getKey() + ": " + e.violations());
        TaskyardException missing = expectError(Status.Code.NOT_FOUND, () -> limits.get(name + "-refused"));
        expectEqual("LIMIT_NOT_FOUND", missing.reason(), "reason of the refused breaker's get");
      }
    }
  }

  /** What a caller learns from a NOT_FOUND: code, reason and message, the id asked for replaced. */
  static String notFound(java.util.function.Consumer<String> call, String id) {
    TaskyardException e = expectError(Status.Code.NOT_FOUND, () -> call.accept(id));
    expectEqual("TASK_NOT_FOUND", e.reason(), "reason");
    return e.code() + "|" + e.reason() + "|" + e.description().replace(id, "<id>");
  }

  static void sameAsMissing(String what, java.util.function.Consumer<String> call, String id) {
    expectEqual(notFound(call, UUID.randomUUID().toString()), notFound(call, id), what + " against a missing id");
  }

  static String required(String name) {
    String value = System.getenv(name);
    check(value != null && !value.isEmpty(), name + " is not set (clients/conformance/README.md)");
    return value;
  }

  static void tenantIsolation(TaskyardClient c) {
    String a = required("TASKYARD_TENANT_A");
    String b = required("TASKYARD_TENANT_B");
    String adminToken = required("TASKYARD_ADMIN_TOKEN");
    try (TaskyardClient ca = client(TARGET, required("TASKYARD_TENANT_A_TOKEN"));
        TaskyardClient cb = client(TARGET, required("TASKYARD_TENANT_B_TOKEN"));
        TaskyardClient aAsB = TaskyardClient.builder(TARGET).plaintext()
            .token(required("TASKYARD_TENANT_A_TOKEN")).tenant(b).timeout(Duration.ofSeconds(10)).build();
        TaskyardClient admin = client(TARGET, adminToken)) {
      String mine = ca.submit("add", 2, 3).task().id();
      TaskInfo done = ca.await(mine, WAIT).task();
      check(done.state() == TaskState.SUCCESS && done.tenant().equals(a), "A's task: " + done.state() + " of " + done.tenant());
      String theirs = cb.submit("add", 4, 4).task().id();
      check(cb.await(theirs, WAIT).task().state().isFinal(), "B's task " + theirs + " not final after 30 s");
      sameAsMissing("A's get of B's task", ca::get, theirs);
      sameAsMissing("A's cancel of B's task", ca::cancel, theirs);
      sameAsMissing("A's wait on B's task", id -> ca.await(id, Duration.ofSeconds(1)), theirs);
      sameAsMissing("B's get of A's task", cb::get, mine);
      List<TaskInfo> listed = ca.list(TaskQuery.builder().pageSize(100).build()).tasks();
      check(listed.stream().anyMatch(t -> t.id().equals(mine)), "A's list does not hold " + mine);
      check(listed.stream().allMatch(t -> !t.id().equals(theirs) && t.tenant().equals(a)), "A's list holds another tenant's task");
      ca.submit("add", 1, 1);
      String token = ca.list(TaskQuery.builder().pageSize(1).build()).nextPageToken();
      check(!token.isEmpty(), "A's first page of 1 task has no next page token");
      List<TaskInfo> borrowed = cb.list(TaskQuery.builder().pageSize(100).pageToken(token).build()).tasks();
      check(borrowed.stream().allMatch(t -> !t.id().equals(mine) && t.tenant().equals(b)), "B's list from A's page token holds another tenant's task");
      expectError(Status.Code.PERMISSION_DENIED, () -> ca.tenants().create(TenantSpec.builder("conformance-" + UUID.randomUUID().toString().substring(0, 8)).build()));
      TaskyardException other = expectError(Status.Code.PERMISSION_DENIED, () -> aAsB.get(theirs));
      expectEqual("OPERATOR_ONLY", other.reason(), "reason of A acting as B");
      expectEqual(a, admin.get(mine).tenant(), "the operator's view of A's task");
      expectEqual(b, admin.get(theirs).tenant(), "the operator's view of B's task");

      String name = "conformance-" + UUID.randomUUID().toString().substring(0, 8);
      TenantInfo made = admin.tenants().create(TenantSpec.builder(name).maxConcurrency(5).weight(2).build());
      check(made.name().equals(name) && made.state() == TenantInfo.State.ACTIVE && made.maxConcurrency() == 5 && made.weight() == 2, "created " + made);
      TenantInfo got = admin.tenants().get(name);
      check(got.maxConcurrency() == 5 && got.weight() == 2, "got " + got);
      check(admin.tenants().stream(100).anyMatch(t -> t.name().equals(name)), name + " not among the tenants listed");
      TenantInfo gone = admin.tenants().suspend(name, "conformance");
      check(gone.state() == TenantInfo.State.SUSPENDED && gone.suspendedAt().isPresent(), "suspended " + gone);
      try (TaskyardClient acting = TaskyardClient.builder(TARGET).plaintext().token(adminToken).tenant(name).timeout(Duration.ofSeconds(10)).build()) {
        TaskyardException refused = expectError(Status.Code.FAILED_PRECONDITION, () -> acting.submit("add", 1, 2));
        expectEqual("TENANT_SUSPENDED", refused.reason(), "reason of a suspended tenant's submission");
        expectEqual(TenantInfo.State.ACTIVE, admin.tenants().resume(name).state(), "resumed");
        String id = acting.submit("add", 1, 2).task().id();
        TaskInfo ran = acting.await(id, WAIT).task();
        check(ran.state() == TaskState.SUCCESS && Long.valueOf(3).equals(ran.result()) && ran.tenant().equals(name),
            "task " + id + ": " + ran.state() + ", result " + ran.result() + ", tenant " + ran.tenant());
      }
    }
  }

  // --- helpers ----------------------------------------------------------------------------

  static TaskyardClient client(String target, String token) {
    return TaskyardClient.builder(target).plaintext().token(token).timeout(Duration.ofSeconds(10)).build();
  }

  static TaskyardException expectError(Status.Code code, Runnable call) {
    try {
      call.run();
    } catch (TaskyardException e) {
      if (e.code() != code) {
        throw new Mismatch("expected " + code + ", got " + e.getMessage() + " (reason " + e.reason() + ")");
      }
      return e;
    }
    throw new Mismatch("expected " + code + ", the call succeeded");
  }

  static boolean hasViolation(TaskyardException e, String field) {
    return e.violations().stream().map(FieldViolation::field).anyMatch(field::equals);
  }

  static void cancelQuietly(TaskyardClient c, String id) {
    try {
      c.cancel(id, "conformance", Duration.ofSeconds(15));
    } catch (TaskyardException ignored) {
      // Already final: nothing left to stop.
    }
  }

  static void check(boolean ok, String what) {
    if (!ok) {
      throw new Mismatch(what);
    }
  }

  static void expectEqual(Object expected, Object actual, String what) {
    if (!java.util.Objects.equals(expected, actual)) {
      throw new Mismatch(what + ": expected " + expected + ", got " + actual);
    }
  }

  static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      System.err.println("conformance: set " + name + " (clients/conformance/README.md)");
      System.exit(2);
    }
    return value;
  }
}
