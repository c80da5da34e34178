package dev.taskyard.client;

import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Function;

/** Every task of a query, fetching the next page only when the last one is used up. */
final class TaskPager implements Iterator<TaskInfo> {
  private final Function<TaskQuery, TaskPage> fetch;
  private TaskQuery next;
  private Iterator<TaskInfo> current = Collections.emptyIterator();
  /** A next-page token equal to the one sent: the pages would repeat for ever. */
  private String repeatedToken;

  TaskPager(TaskQuery first, Function<TaskQuery, TaskPage> fetch) {
    this.next = first;
    this.fetch = fetch;
  }

  @Override
  public boolean hasNext() {
    // A loop, since a page may come back empty with a token after it.
    while (!current.hasNext() && next != null) {
      TaskPage page = fetch.apply(next);
      current = page.tasks().iterator();
      String sent = next.toProto().getPageToken();
      next = page.hasNextPage() ? next.withPageToken(page.nextPageToken()) : null;
      if (page.hasNextPage() && page.nextPageToken().equals(sent)) {
        repeatedToken = sent;
        next = null;
      }
    }
    if (!current.hasNext() && repeatedToken != null) {
      throw new IllegalStateException("the gateway answered page token \"" + repeatedToken + "\" with itself");
    }
    return current.hasNext();
  }

  @Override
  public TaskInfo next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return current.next();
  }
}
