package dev.taskyard.client;

import java.util.List;

/**
 * One page of tenants, by name.
 *
 * @param tenants the tenants of this page
 * @param nextPageToken the token of the next page ({@link Tenants#list(int, String)}); empty on
 *     the last page
 */
public record TenantPage(List<TenantInfo> tenants, String nextPageToken) {
  public TenantPage {
    tenants = List.copyOf(tenants);
  }

  /** True when there is a page after this one. */
  public boolean hasNextPage() {
    return !nextPageToken.isEmpty();
  }
}
