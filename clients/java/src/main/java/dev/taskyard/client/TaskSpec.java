package dev.taskyard.client;

import com.google.protobuf.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What to run: a task name, its JSON arguments and how to run it. Immutable; made with {@link
 * #of} or {@link #builder}:
 *
 * <pre>{@code
 * TaskSpec spec = TaskSpec.builder("resize")
 *     .args("photo.png", 640)
 *     .kwarg("format", "webp")
 *     .priority(Priority.HIGH)
 *     .maxRetries(2)
 *     .timeout(Duration.ofMinutes(1))
 *     .build();
 * }</pre>
 *
 * <p>Flow control: {@link Builder#limit} names a limit (made with {@link Limits#create}) and a
 * key, {@link Builder#fairnessKey} the key the task shares its lane by.
 *
 * <p>Arguments are converted by {@link JsonValues} when the spec is built, so a value that is
 * not JSON fails here with an {@link IllegalArgumentException}, not on the wire.
 */
public final class TaskSpec {
  private final dev.taskyard.v1.TaskSpec proto;

  private TaskSpec(dev.taskyard.v1.TaskSpec proto) {
    this.proto = proto;
  }

  /** {@code name(args...)} with every option left to the task's and the server's defaults. */
  public static TaskSpec of(String name, Object... args) {
    return builder(name).args(args).build();
  }

  /** A builder for a task named {@code name} (a function registered on a worker pool). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The task name. */
  public String name() {
    return proto.getName();
  }

  /** The request id; empty when the client is to make one at submission. */
  public String requestId() {
    return proto.getRequestId();
  }

  /** The spec as the wire message, for calls this client does not wrap. */
  public dev.taskyard.v1.TaskSpec toProto() {
    return proto;
  }

  /** This spec with a random request id when it has none, so resending it is idempotent. */
  dev.taskyard.v1.TaskSpec withRequestId() {
    if (!proto.getRequestId().isEmpty()) {
      return proto;
    }
    return proto.toBuilder().setRequestId(java.util.UUID.randomUUID().toString()).build();
  }

  @Override
  public String toString() {
    return "TaskSpec[" + proto.getName() + "]";
  }

  /** Builds a {@link TaskSpec}; every setter replaces what was set before. */
  public static final class Builder {
    private final dev.taskyard.v1.TaskSpec.Builder proto = dev.taskyard.v1.TaskSpec.newBuilder();
    private final List<Object> args = new ArrayList<>();
    private final Map<String, Object> kwargs = new LinkedHashMap<>();

    private Builder(String name) {
      proto.setName(Objects.requireNonNull(name, "name"));
    }

    /** Positional arguments (JSON values). */
    public Builder args(Object... args) {
      return args(Arrays.asList(args));
    }

    /** Positional arguments (JSON values). */
    public Builder args(List<?> args) {
      this.args.clear();
      this.args.addAll(args);
      return this;
    }

    /** Keyword arguments (JSON values by name). */
    public Builder kwargs(Map<String, ?> kwargs) {
      this.kwargs.clear();
      this.kwargs.putAll(kwargs);
      return this;
    }

    /** One keyword argument. */
    public Builder kwarg(String name, Object value) {
      kwargs.put(Objects.requireNonNull(name, "name"), value);
      return this;
    }

    public Builder priority(Priority priority) {
      proto.setPriority(priority.toProto());
      return this;
    }

    /** The logical queue; empty means {@code default}. */
    public Builder queue(String queue) {
      proto.setQueue(queue);
      return this;
    }

    /** Free-form labels, returned as given. */
    public Builder labels(Map<String, String> labels) {
      proto.clearLabels().putAllLabels(labels);
      return this;
    }

    public Builder label(String key, String value) {
      proto.putLabels(key, value);
      return this;
    }

    /** Retries after the first attempt; unset: the task's declared budget, else the server's. */
    public Builder maxRetries(int maxRetries) {
      proto.setMaxRetries(maxRetries);
      return this;
    }

    /** Per-attempt execution limit; unset: the task's declared timeout, else the server's. */
    public Builder timeout(Duration timeout) {
      proto.setTimeout(Protos.duration(timeout));
      return this;
    }

    /** Run no earlier than this long after acceptance (exclusive with {@link #eta}). */
    public Builder countdown(Duration countdown) {
      proto.setCountdown(Protos.duration(countdown));
      return this;
    }

    /** Run no earlier than this instant (exclusive with {@link #countdown}). */
    public Builder eta(Instant eta) {
      proto.setEta(Timestamp.newBuilder().setSeconds(eta.getEpochSecond()).setNanos(eta.getNano()));
      return this;
    }

    /**
     * Exactly-once acceptance: a second submission with this id returns the first task. Unset,
     * the client makes a random one, so its own retries never run a task twice.
     */
    public Builder requestId(String requestId) {
      proto.setRequestId(requestId);
      return this;
    }

    /** Acceptance once per key within {@link #idempotencyWindow} (default 24 h). */
    public Builder idempotencyKey(String key) {
      proto.setIdempotencyKey(key);
      return this;
    }

    public Builder idempotencyWindow(Duration window) {
      proto.setIdempotencyWindow(Protos.duration(window));
      return this;
    }

    /** Tasks that must all end SUCCESS before this one is queued. */
    public Builder dependsOn(String... taskIds) {
      return dependsOn(Arrays.asList(taskIds));
    }

    public Builder dependsOn(List<String> taskIds) {
      proto.clearDependsOn().addAllDependsOn(taskIds);
      return this;
    }

    /** The task that submits this one, if any. */
    public Builder parentId(String parentId) {
      proto.setParentId(parentId);
      return this;
    }

    /**
     * Adds a limit an attempt takes units of when the scheduler admits it (at most 8, each limit
     * once), e.g. {@code LimitUse.of("per-customer", "customer:42")}.
     */
    public Builder limit(LimitUse use) {
      proto.addLimits(use.toProto());
      return this;
    }

    /** The limits an attempt takes units of; replaces those added before. */
    public Builder limits(List<LimitUse> uses) {
      proto.clearLimits();
      uses.forEach(this::limit);
      return this;
    }

    /** The key the task shares its lane by, e.g. a tenant (at most 256 bytes); empty: none. */
    public Builder fairnessKey(String fairnessKey) {
      proto.setFairnessKey(fairnessKey);
      return this;
    }

    /**
     * The spec.
     *
     * @throws IllegalArgumentException when an argument is not a JSON value
     */
    public TaskSpec build() {
      dev.taskyard.v1.TaskSpec.Builder out = proto.clone();
      if (!args.isEmpty()) {
        out.setArgs(JsonValues.toListValue(args));
      }
      if (!kwargs.isEmpty()) {
        out.setKwargs(JsonValues.toStruct(kwargs));
      }
      return new TaskSpec(out.build());
    }
  }
}
