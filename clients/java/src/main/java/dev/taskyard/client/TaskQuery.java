package dev.taskyard.client;

import dev.taskyard.v1.ListTasksRequest;
import java.util.Arrays;
import java.util.Collection;

/**
 * Which tasks to list: filters (all optional; combined with AND), a page size and where to start.
 *
 * <pre>{@code
 * TaskQuery failed = TaskQuery.builder().states(TaskState.FAILURE).queue("reports").pageSize(100).build();
 * }</pre>
 */
public final class TaskQuery {
  private final ListTasksRequest proto;

  private TaskQuery(ListTasksRequest proto) {
    this.proto = proto;
  }

  /** Every task, in pages of the server's default size. */
  public static TaskQuery all() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder(ListTasksRequest.newBuilder());
  }

  /** A builder starting from this query. */
  public Builder toBuilder() {
    return new Builder(proto.toBuilder());
  }

  /** This query from another page on. */
  public TaskQuery withPageToken(String pageToken) {
    return new TaskQuery(proto.toBuilder().setPageToken(pageToken).build());
  }

  ListTasksRequest toProto() {
    return proto;
  }

  @Override
  public String toString() {
    return "TaskQuery[" + proto.toString().replace('\n', ' ').trim() + "]";
  }

  /** Builds a {@link TaskQuery}. */
  public static final class Builder {
    private final ListTasksRequest.Builder proto;

    private Builder(ListTasksRequest.Builder proto) {
      this.proto = proto;
    }

    /** Tasks in any of these states; none given means all states. */
    public Builder states(TaskState... states) {
      return states(Arrays.asList(states));
    }

    public Builder states(Collection<TaskState> states) {
      proto.clearStates();
      states.forEach(s -> proto.addStates(s.toProto()));
      return this;
    }

    /** Tasks of this name. */
    public Builder name(String name) {
      proto.setName(name);
      return this;
    }

    public Builder queue(String queue) {
      proto.setQueue(queue);
      return this;
    }

    public Builder priority(Priority priority) {
      proto.setPriority(priority.toProto());
      return this;
    }

    /** 1 to 1000; 0 means the server's default (100). */
    public Builder pageSize(int pageSize) {
      proto.setPageSize(pageSize);
      return this;
    }

    /** Start at the page of this token (a {@link TaskPage#nextPageToken()}). */
    public Builder pageToken(String pageToken) {
      proto.setPageToken(pageToken);
      return this;
    }

    public TaskQuery build() {
      return new TaskQuery(proto.build());
    }
  }
}
