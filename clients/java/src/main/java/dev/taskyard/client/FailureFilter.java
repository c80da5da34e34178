package dev.taskyard.client;

import com.google.protobuf.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Which dead letters a call of {@link Failures} is about: the conjunction of what is set. The
 * gateway refuses a filter with nothing set unless it is {@link #all()} (INVALID_ARGUMENT on
 * {@code filter}).
 *
 * <pre>{@code
 * FailureFilter.group(groupId);
 * FailureFilter.builder().queue("payments").failedAfter(Instant.now().minus(Duration.ofHours(1))).build();
 * }</pre>
 */
public final class FailureFilter {
  /** The most task ids one filter may name. */
  public static final int MAX_TASK_IDS = 1000;

  private final dev.taskyard.v1.FailureFilter proto;

  private FailureFilter(dev.taskyard.v1.FailureFilter proto) {
    this.proto = proto;
  }

  /** Every dead letter. */
  public static FailureFilter all() {
    return builder().all(true).build();
  }

  /** The dead letters of one group ({@link FailureGroup#groupId()}). */
  public static FailureFilter group(String groupId) {
    return builder().groupId(groupId).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  static FailureFilter fromProto(dev.taskyard.v1.FailureFilter proto) {
    return new FailureFilter(Objects.requireNonNull(proto, "filter"));
  }

  /** The filter as sent. */
  public dev.taskyard.v1.FailureFilter toProto() {
    return proto;
  }

  public String groupId() {
    return proto.getGroupId();
  }

  public String queue() {
    return proto.getQueue();
  }

  public String name() {
    return proto.getName();
  }

  public Optional<Instant> failedAfter() {
    return Protos.instant(proto.hasFailedAfter(), proto.getFailedAfter());
  }

  public Optional<Instant> failedBefore() {
    return Protos.instant(proto.hasFailedBefore(), proto.getFailedBefore());
  }

  public Map<String, String> labels() {
    return proto.getLabelsMap();
  }

  public List<String> taskIds() {
    return proto.getTaskIdsList();
  }

  public DeadLetterReason reason() {
    return DeadLetterReason.fromProto(proto.getReason());
  }

  public boolean isAll() {
    return proto.getAll();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FailureFilter other && proto.equals(other.proto);
  }

  @Override
  public int hashCode() {
    return proto.hashCode();
  }

  @Override
  public String toString() {
    return "FailureFilter[" + proto.toString().replace('\n', ' ').trim() + "]";
  }

  /** Builds a filter; every field is optional. */
  public static final class Builder {
    private final dev.taskyard.v1.FailureFilter.Builder proto = dev.taskyard.v1.FailureFilter.newBuilder();

    private Builder() {}

    public Builder groupId(String groupId) {
      proto.setGroupId(groupId);
      return this;
    }

    public Builder queue(String queue) {
      proto.setQueue(queue);
      return this;
    }

    /** A task name. */
    public Builder name(String name) {
      proto.setName(name);
      return this;
    }

    /** The final failure happened at or after this instant. */
    public Builder failedAfter(Instant at) {
      proto.setFailedAfter(timestamp(at));
      return this;
    }

    /** The final failure happened before this instant. */
    public Builder failedBefore(Instant at) {
      proto.setFailedBefore(timestamp(at));
      return this;
    }

    /** The task has this label, with this value (every label given must match). */
    public Builder label(String key, String value) {
      proto.putLabels(key, value);
      return this;
    }

    /** At most {@link #MAX_TASK_IDS} ids in all. */
    public Builder taskIds(List<String> ids) {
      proto.addAllTaskIds(ids);
      return this;
    }

    public Builder reason(DeadLetterReason reason) {
      proto.setReason(reason.toProto());
      return this;
    }

    /** Match every dead letter: required when nothing else is set. */
    public Builder all(boolean all) {
      proto.setAll(all);
      return this;
    }

    /** @throws IllegalArgumentException with more than {@link #MAX_TASK_IDS} task ids */
    public FailureFilter build() {
      if (proto.getTaskIdsCount() > MAX_TASK_IDS) {
        throw new IllegalArgumentException(
            "filter.task_ids: at most " + MAX_TASK_IDS + " ids, not " + proto.getTaskIdsCount());
      }
      return new FailureFilter(proto.build());
    }

    private static Timestamp timestamp(Instant at) {
      return Timestamp.newBuilder().setSeconds(at.getEpochSecond()).setNanos(at.getNano()).build();
    }
  }
}
