package dev.taskyard.client;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/** What a gRPC target names, without resolving it. */
final class Targets {
  private Targets() {}

  /** True for {@code localhost}, 127.0.0.0/8 and ::1 (host names are not resolved). */
  static boolean isLoopback(String target) {
    String host = host(target);
    if (host.toLowerCase(Locale.ROOT).equals("localhost")) {
      return true;
    }
    // Only literals: resolving a name here would trust whatever DNS answers.
    if (!host.matches("\\d{1,3}(\\.\\d{1,3}){3}") && !host.contains(":")) {
      return false;
    }
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /** The host of {@code host:port}, {@code [v6]:port}, {@code dns:///host:port} or a bare host. */
  static String host(String target) {
    String rest = target;
    for (String scheme : new String[] {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
      if (rest.startsWith(scheme)) {
        rest = rest.substring(scheme.length());
        break;
      }
    }
    int comma = rest.indexOf(',');
    if (comma >= 0) {
      rest = rest.substring(0, comma);
    }
    if (rest.startsWith("[")) {
      int end = rest.indexOf(']');
      return end < 0 ? rest.substring(1) : rest.substring(1, end);
    }
    int colon = rest.lastIndexOf(':');
    if (colon >= 0 && rest.indexOf(':') == colon) {
      return rest.substring(0, colon);
    }
    return rest;
  }
}
