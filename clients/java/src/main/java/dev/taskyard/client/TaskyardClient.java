package dev.taskyard.client;

import dev.taskyard.v1.BatchSubmitTasksRequest;
import dev.taskyard.v1.CancelTaskRequest;
import dev.taskyard.v1.CancelTaskResponse;
import dev.taskyard.v1.GetTaskRequest;
import dev.taskyard.v1.ListTasksResponse;
import dev.taskyard.v1.RunTaskRequest;
import dev.taskyard.v1.RunTaskResponse;
import dev.taskyard.v1.SubmitTaskRequest;
import dev.taskyard.v1.SubmitTaskResponse;
import dev.taskyard.v1.TaskServiceGrpc;
import dev.taskyard.v1.TaskServiceGrpc.TaskServiceBlockingStub;
import dev.taskyard.v1.WaitTaskRequest;
import dev.taskyard.v1.WaitTaskResponse;
import io.grpc.Channel;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A client of a Taskyard gateway: submit tasks, get them, wait for them, list and cancel them.
 *
 * <pre>{@code
 * try (TaskyardClient client = TaskyardClient.builder("localhost:50051").plaintext().build()) {
 *   Submission s = client.submit("add", 2, 3);
 *   WaitResult done = client.await(s.task().id(), Duration.ofSeconds(30));
 *   System.out.println(done.task().result()); // 5
 * }
 * }</pre>
 *
 * <p>{@link #failures()} lists dead letters by failure group and redrives them.
 *
 * <p>{@link #limits()} manages the limits and fairness weights that tasks name in {@link
 * TaskSpec.Builder#limit} and {@link TaskSpec.Builder#fairnessKey}.
 *
 * <p>Thread-safe; one client per gateway is enough for a whole application. Every call has a
 * deadline: the builder's timeout (30 s by default), or the one of a {@link #withDeadline} view.
 * A failed call throws {@link TaskyardException}. Submits and reads refused with UNAVAILABLE are
 * retried a few times with backoff (a cancel is not); a submit is retried with the same request id,
 * so it is accepted once.
 */
public final class TaskyardClient implements AutoCloseable {
  /** This library's version, sent in the user agent. */
  public static final String VERSION = "0.1.0";

  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
  /** The longest wait the server grants one WaitTask call. */
  private static final Duration MAX_SERVER_WAIT = Duration.ofSeconds(300);
  /** Time for the reply beyond a wait the server does itself. */
  private static final Duration WAIT_SLACK = Duration.ofSeconds(10);
  /** A wait answered this close to its end is over (clocks and rounding differ a little). */
  private static final Duration WAIT_TOLERANCE = Duration.ofMillis(20);
  /**
   * The gateway answers a wait about 100 ms before the call's deadline, and at once when less is
   * left: closer than this, asking again would only spin until the deadline.
   */
  private static final long DEADLINE_MARGIN_MS = 150;

  private final ManagedChannel channel;
  private final TaskServiceBlockingStub stub;
  private final Duration timeout;
  /** True in a {@link #withDeadline} view: its timeout bounds waits too. */
  private final boolean fixed;
  private final boolean owner;
  private final Limits limits;
  private final Failures failures;
  private final Tenants tenants;

  TaskyardClient(ManagedChannel channel, Duration timeout) {
    this(channel, TaskServiceGrpc.newBlockingStub(channel), timeout, false, true);
  }

  private TaskyardClient(
      ManagedChannel channel, TaskServiceBlockingStub stub, Duration timeout, boolean fixed, boolean owner) {
    this.channel = channel;
    this.stub = stub;
    this.timeout = timeout;
    this.fixed = fixed;
    this.owner = owner;
    this.limits = new Limits(channel, timeout);
    this.failures = new Failures(channel, timeout);
    this.tenants = new Tenants(channel, timeout);
  }

  /** A builder for a client of the gateway at {@code target} ({@code host:port}). */
  public static TaskyardClientBuilder builder(String target) {
    return new TaskyardClientBuilder(target);
  }

  /**
   * A view of this client whose every call has this deadline, counted from the call's start
   * (a wait included: a longer wait fails with DEADLINE_EXCEEDED). It shares this client's
   * connection; closing it does nothing.
   */
  public TaskyardClient withDeadline(Duration deadline) {
    if (deadline.isNegative() || deadline.isZero()) {
      throw new IllegalArgumentException("the deadline must be positive: " + deadline);
    }
    return new TaskyardClient(channel, stub, deadline, true, false);
  }

  /**
   * The channel, with the client's token and tracing, for the services this class does not wrap
   * (e.g. {@code QueueServiceGrpc.newBlockingStub(client.channel())}).
   */
  public Channel channel() {
    return channel;
  }

  /**
   * Submits {@code name(args...)}.
   *
   * @throws IllegalArgumentException when an argument is not a JSON value
   */
  public Submission submit(String name, Object... args) {
    return submit(TaskSpec.of(name, args));
  }

  /** Submits one task; a spec without a request id gets a random one. */
  public Submission submit(TaskSpec spec) {
    SubmitTaskRequest req = SubmitTaskRequest.newBuilder().setTask(spec.withRequestId()).build();
    SubmitTaskResponse resp = call(() -> stub().submitTask(req));
    return new Submission(TaskInfo.fromProto(resp.getTask()), resp.getCreated());
  }

  /**
   * Submits up to 1,000 tasks in one call: all are accepted or none (the exception lists every
   * bad field as {@code tasks[i].field}). Outcomes come in request order.
   */
  public List<BatchEntry> submitBatch(List<TaskSpec> specs) {
    BatchSubmitTasksRequest.Builder req = BatchSubmitTasksRequest.newBuilder();
    specs.forEach(s -> req.addTasks(s.withRequestId()));
    BatchSubmitTasksRequest built = req.build();
    return call(() -> stub().batchSubmitTasks(built)).getTasksList().stream()
        .map(t -> new BatchEntry(t.getId(), TaskState.fromProto(t.getState()), t.getCreated()))
        .toList();
  }

  /** The task with this id ({@code NOT_FOUND}, reason {@code TASK_NOT_FOUND}, if none). */
  public TaskInfo get(String id) {
    GetTaskRequest req = GetTaskRequest.newBuilder().setId(id).build();
    return TaskInfo.fromProto(call(() -> stub().getTask(req)).getTask());
  }

  /**
   * Submits one task and waits until it is final, or {@code timeout} has passed, in one call
   * (RunTask): then the result says {@code timedOut} and holds the task as it is (a timed-out run
   * is not an error: the task goes on). Exactly-once per request id, as {@link #submit(TaskSpec)}:
   * a repeat waits on the first submission's task ({@code created} false). A wait longer than the
   * server's 300 s per call goes on as {@link #await(String, Duration)} does.
   */
  public RunResult run(TaskSpec spec, Duration timeout) {
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("the timeout must not be negative: " + timeout);
    }
    Deadline callDeadline = fixed ? deadline(this.timeout) : null;
    long until = System.nanoTime() + timeout.toNanos();
    Duration chunk = timeout.compareTo(MAX_SERVER_WAIT) > 0 ? MAX_SERVER_WAIT : timeout;
    RunTaskRequest req =
        RunTaskRequest.newBuilder().setTask(spec.withRequestId()).setTimeout(Protos.duration(chunk)).build();
    Deadline d = callDeadline != null ? callDeadline : deadline(chunk.plus(WAIT_SLACK));
    RunTaskResponse resp = call(() -> stub.withDeadline(d).runTask(req));
    TaskInfo task = TaskInfo.fromProto(resp.getTask());
    if (resp.getFinal() || until - System.nanoTime() <= WAIT_TOLERANCE.toNanos()) {
      return new RunResult(task, resp.getCreated(), !resp.getFinal());
    }
    // Longer than one call, or ended early (the call's deadline, a gateway stopping).
    WaitResult waited = await(task.id(), Duration.ofNanos(until - System.nanoTime()), callDeadline);
    return new RunResult(waited.task(), resp.getCreated(), waited.timedOut());
  }

  /** Runs {@code name(args...)}, waiting up to 30 s; see {@link #run(TaskSpec, Duration)}. */
  public RunResult run(String name, Object... args) {
    return run(TaskSpec.of(name, args), Duration.ofSeconds(30));
  }

  /**
   * Waits until the task is final, or {@code timeout} has passed: then the result says {@code
   * timedOut} and holds the task as it is (a timed-out wait is not an error). Waits longer than
   * the server's 300 s per call take several calls.
   */
  public WaitResult await(String id, Duration timeout) {
    return await(id, timeout, fixed ? deadline(this.timeout) : null);
  }

  private WaitResult await(String id, Duration timeout, Deadline callDeadline) {
    long until = System.nanoTime() + timeout.toNanos();
    while (true) {
      Duration remaining = Duration.ofNanos(Math.max(0, until - System.nanoTime()));
      Duration chunk = remaining.compareTo(MAX_SERVER_WAIT) > 0 ? MAX_SERVER_WAIT : remaining;
      WaitTaskRequest req = WaitTaskRequest.newBuilder().setId(id).setTimeout(Protos.duration(chunk)).build();
      Deadline d = callDeadline != null ? callDeadline : deadline(chunk.plus(WAIT_SLACK));
      WaitTaskResponse resp = call(() -> stub.withDeadline(d).waitTask(req));
      // The server also answers early, just before the call's deadline; the wait goes on
      // until its own time is over, so a deadline shorter than the wait is DEADLINE_EXCEEDED.
      if (!resp.getTimedOut() || until - System.nanoTime() <= WAIT_TOLERANCE.toNanos()) {
        return new WaitResult(TaskInfo.fromProto(resp.getTask()), resp.getTimedOut());
      }
      if (callDeadline != null
          && !TaskState.fromProto(resp.getTask().getState()).isFinal()
          && callDeadline.timeRemaining(TimeUnit.MILLISECONDS) < DEADLINE_MARGIN_MS) {
        throw TaskyardException.fromGrpc(
            Status.DEADLINE_EXCEEDED.withDescription("the call's deadline came before the wait's end").asRuntimeException());
      }
    }
  }

  /** Waits up to 30 s; see {@link #await(String, Duration)}. */
  public WaitResult await(String id) {
    return await(id, Duration.ofSeconds(30));
  }

  /** One page of tasks, newest first. */
  public TaskPage list(TaskQuery query) {
    ListTasksResponse resp = call(() -> stub().listTasks(query.toProto()));
    return new TaskPage(resp.getTasksList().stream().map(TaskInfo::fromProto).toList(), resp.getNextPageToken());
  }

  /** Every task of the query, newest first; pages are fetched as the iteration reaches them. */
  public Iterable<TaskInfo> iterate(TaskQuery query) {
    return () -> pager(query);
  }

  /** {@link #iterate} as a sequential, lazy stream. */
  public Stream<TaskInfo> stream(TaskQuery query) {
    Spliterator<TaskInfo> tasks =
        Spliterators.spliteratorUnknownSize(pager(query), Spliterator.ORDERED | Spliterator.NONNULL);
    return StreamSupport.stream(tasks, false);
  }

  private Pager<TaskInfo> pager(TaskQuery query) {
    return new Pager<>(query.toProto().getPageToken(), token -> {
      TaskPage page = list(query.withPageToken(token));
      return new Pager.Page<>(page.tasks(), page.nextPageToken());
    });
  }

  /**
   * Named limits and fairness weights (flow control), over this client's connection and with its
   * deadline: {@code client.limits().create(LimitSpec.concurrency("per-customer", 3).perKey(true).build())}.
   */
  public Limits limits() {
    return limits;
  }

  /**
   * Dead letters, their groups, their redrive and their purge, over this client's connection and
   * with its deadline: {@code client.failures().redrive(FailureFilter.group(id), 50, true, "")}.
   */
  public Failures failures() {
    return failures;
  }

  /**
   * Tenants, for operator tokens, over this client's connection and with its deadline: {@code
   * client.tenants().suspend("acme", "invoice overdue")}.
   */
  public Tenants tenants() {
    return tenants;
  }

  /** Cancels a task; see {@link #cancel(String, String, Duration)}. */
  public CancelResult cancel(String id) {
    return cancel(id, "", null);
  }

  /** Cancels a task, with a reason kept on it; see {@link #cancel(String, String, Duration)}. */
  public CancelResult cancel(String id, String reason) {
    return cancel(id, reason, null);
  }

  /**
   * Cancels a task and its unfinished children. One no pool holds is CANCELLED at once. One
   * already handed to a pool (ASSIGNED or RUNNING) gets its cancel flag: its pool never starts a
   * body whose cancel came first, and stops a running one in steps. With a {@code wait}, the call
   * waits up to that long for it to stop ({@link CancelResult#step()} says how); with {@code null}
   * it returns at once with {@code cancelled} false. A final task fails the call with {@code
   * FAILED_PRECONDITION}, reason {@code TASK_ALREADY_FINAL}. A {@code null} reason is none.
   *
   * <p>A cancel refused with UNAVAILABLE is not retried (a repeat of one that took effect would
   * fail TASK_ALREADY_FINAL): {@link #get} the task to see where it stands.
   */
  public CancelResult cancel(String id, String reason, Duration wait) {
    CancelTaskRequest.Builder req =
        CancelTaskRequest.newBuilder().setId(id).setReason(reason == null ? "" : reason);
    Deadline d = deadline(timeout);
    if (wait != null) {
      req.setWait(Protos.duration(wait));
      d = fixed ? d : deadline(wait.plus(WAIT_SLACK));
    }
    CancelTaskRequest built = req.build();
    Deadline callDeadline = d;
    CancelTaskResponse resp = call(() -> stub.withDeadline(callDeadline).cancelTask(built));
    return new CancelResult(
        TaskInfo.fromProto(resp.getTask()),
        resp.getCancelled(),
        CancelStep.fromProto(resp.getStep()),
        resp.getCancelledChildrenList());
  }

  /**
   * Closes the connection, letting calls in flight finish for a few seconds. A {@link
   * #withDeadline} view's close does nothing: close the client it came from.
   */
  @Override
  public void close() {
    if (!owner) {
      return;
    }
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  private TaskServiceBlockingStub stub() {
    return stub.withDeadline(deadline(timeout));
  }

  private static Deadline deadline(Duration d) {
    return Deadline.after(d.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Runs a blocking call; a gRPC failure becomes a {@link TaskyardException}. */
  static <T> T call(Supplier<T> rpc) {
    try {
      return rpc.get();
    } catch (StatusRuntimeException e) {
      throw TaskyardException.fromGrpc(e);
    }
  }

  @Override
  public String toString() {
    return "TaskyardClient[" + channel.authority() + "]";
  }
}
