package dev.taskyard.client;

import java.util.List;

/**
 * One page of a listing of {@link Failures}: failure groups, dead letters, redrives or a redrive's
 * items.
 *
 * @param items the items of this page
 * @param nextPageToken the token of the next page; empty on the last page
 */
public record Page<T>(List<T> items, String nextPageToken) {
  public Page {
    items = List.copyOf(items);
  }

  /** True when there is a page after this one. */
  public boolean hasNextPage() {
    return !nextPageToken.isEmpty();
  }
}
