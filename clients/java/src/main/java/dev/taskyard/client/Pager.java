package dev.taskyard.client;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.Function;

/** Every item of a listing, fetching the next page only when the last one is used up. */
final class Pager<T> implements Iterator<T> {
  /** One page: its items and the token of the next one (empty on the last). */
  record Page<T>(List<T> items, String nextPageToken) {}

  private final Function<String, Page<T>> fetch;
  /** The token of the page to fetch next; null when there is none. */
  private String next;
  private Iterator<T> current = Collections.emptyIterator();
  /** A next-page token equal to the one sent: the pages would repeat for ever. */
  private String repeatedToken;

  Pager(String firstToken, Function<String, Page<T>> fetch) {
    this.next = firstToken;
    this.fetch = fetch;
  }

  @Override
  public boolean hasNext() {
    // A loop, since a page may come back empty with a token after it.
    while (!current.hasNext() && next != null) {
      Page<T> page = fetch.apply(next);
      current = page.items().iterator();
      String sent = next;
      next = page.nextPageToken().isEmpty() ? null : page.nextPageToken();
      if (sent.equals(next)) {
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
  public T next() {
    if (!hasNext()) {
      throw new NoSuchElementException();
    }
    return current.next();
  }
}
