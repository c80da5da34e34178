package dev.taskyard.client;

import java.util.List;

/**
 * One page of a task list, newest first.
 *
 * @param tasks the tasks of this page
 * @param nextPageToken the token of the next page ({@link TaskQuery.Builder#pageToken}); empty on
 *     the last page
 */
public record TaskPage(List<TaskInfo> tasks, String nextPageToken) {
  public TaskPage {
    tasks = List.copyOf(tasks);
  }

  /** True when there is a page after this one. */
  public boolean hasNextPage() {
    return !nextPageToken.isEmpty();
  }
}
