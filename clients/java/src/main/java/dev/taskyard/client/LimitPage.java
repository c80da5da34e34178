package dev.taskyard.client;

import java.util.List;

/**
 * One page of limits, by name.
 *
 * @param limits the limits of this page
 * @param nextPageToken the token of the next page ({@link Limits#list(int, String)}); empty on the
 *     last page
 */
public record LimitPage(List<LimitInfo> limits, String nextPageToken) {
  public LimitPage {
    limits = List.copyOf(limits);
  }

  /** True when there is a page after this one. */
  public boolean hasNextPage() {
    return !nextPageToken.isEmpty();
  }
}
