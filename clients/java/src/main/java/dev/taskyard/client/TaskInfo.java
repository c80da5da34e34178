package dev.taskyard.client;

import dev.taskyard.v1.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A task as the gateway stores it: what it runs, where it is, and its outcome. A snapshot; get
 * or await the task again for a newer one. JSON fields come as plain Java values ({@link
 * JsonValues}); the fields this class has no accessor for are on {@link #proto()}.
 */
public final class TaskInfo {
  private final Task proto;

  private TaskInfo(Task proto) {
    this.proto = proto;
  }

  /** Wraps a task message (for the generated stubs' replies). */
  public static TaskInfo fromProto(Task task) {
    return new TaskInfo(Objects.requireNonNull(task, "task"));
  }

  /** The full message, with every field the server sent. */
  public Task proto() {
    return proto;
  }

  public String id() {
    return proto.getId();
  }

  public String name() {
    return proto.getName();
  }

  public TaskState state() {
    return TaskState.fromProto(proto.getState());
  }

  /** SUCCESS, FAILURE or CANCELLED. */
  public boolean isFinal() {
    return state().isFinal();
  }

  /** Positional arguments. */
  public List<Object> args() {
    return JsonValues.fromListValue(proto.getArgs());
  }

  /** Keyword arguments. */
  public Map<String, Object> kwargs() {
    return JsonValues.fromStruct(proto.getKwargs());
  }

  /** The return value of a successful run ({@code null} before, or when it returned None). */
  public Object result() {
    return proto.hasResult() ? JsonValues.fromValue(proto.getResult()) : null;
  }

  /** The failure of the last failed attempt, if any. */
  public Optional<TaskFailure> failure() {
    return proto.hasFailure() ? Optional.of(TaskFailure.fromProto(proto.getFailure())) : Optional.empty();
  }

  public Priority priority() {
    return Priority.fromProto(proto.getPriority());
  }

  public String queue() {
    return proto.getQueue();
  }

  public Map<String, String> labels() {
    return proto.getLabelsMap();
  }

  /** Retries after the first attempt; -1: the task's declared budget, else the server's. */
  public int maxRetries() {
    return proto.getMaxRetries();
  }

  /** The per-attempt limit; empty: the task's declared one, else the server's. */
  public Optional<Duration> timeout() {
    return proto.hasTimeout() ? Optional.of(Protos.duration(proto.getTimeout())) : Optional.empty();
  }

  /** The current (or last) attempt, from 1. */
  public int attempt() {
    return proto.getAttempt();
  }

  public String requestId() {
    return proto.getRequestId();
  }

  public String idempotencyKey() {
    return proto.getIdempotencyKey();
  }

  public String parentId() {
    return proto.getParentId();
  }

  public String rootId() {
    return proto.getRootId();
  }

  public List<String> dependsOn() {
    return proto.getDependsOnList();
  }

  /** The worker that runs (or ran) the current attempt. */
  public String workerId() {
    return proto.getWorkerId();
  }

  /** A cancel was asked for while a pool held the task (ASSIGNED or RUNNING). */
  public boolean cancelRequested() {
    return proto.getCancelRequested();
  }

  /** The caller's reason, or the failed dependency or cancelled parent that cascaded to it. */
  public String cancelReason() {
    return proto.getCancelReason();
  }

  /** The limits it takes units of: as submitted, with those its task name declares. */
  public List<LimitUse> limits() {
    return proto.getLimitsList().stream().map(LimitUse::fromProto).toList();
  }

  /** The key it shares its lane by; empty when none. */
  public String fairnessKey() {
    return proto.getFairnessKey();
  }

  /** The tenant it belongs to: the submitting token's; empty for the default tenant. */
  public String tenant() {
    return proto.getTenant();
  }

  /** Why its failure is final while it is a dead letter; UNSPECIFIED otherwise. */
  public DeadLetterReason deadLetterReason() {
    return DeadLetterReason.fromProto(proto.getDeadLetterReason());
  }

  /** The redrive that re-queued it last; empty when none did. */
  public String redriveId() {
    return proto.getRedriveId();
  }

  /** The failed attempt the last redrive took it from; 0 when none did. */
  public int redrivenFromAttempt() {
    return proto.getRedrivenFromAttempt();
  }

  /** Every failed attempt, oldest first ({@link TaskyardClient#get} fills it; lists leave it empty). */
  public List<TaskFailure> failures() {
    return proto.getFailuresList().stream().map(TaskFailure::fromProto).toList();
  }

  public Optional<Instant> createdAt() {
    return Protos.instant(proto.hasCreatedAt(), proto.getCreatedAt());
  }

  public Optional<Instant> startedAt() {
    return Protos.instant(proto.hasStartedAt(), proto.getStartedAt());
  }

  public Optional<Instant> finishedAt() {
    return Protos.instant(proto.hasFinishedAt(), proto.getFinishedAt());
  }

  /** When a SCHEDULED or RETRYING task becomes due. */
  public Optional<Instant> runAt() {
    return Protos.instant(proto.hasRunAt(), proto.getRunAt());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TaskInfo other && proto.equals(other.proto);
  }

  @Override
  public int hashCode() {
    return proto.hashCode();
  }

  @Override
  public String toString() {
    return "TaskInfo[id=" + id() + ", name=" + name() + ", state=" + state() + "]";
  }
}
