/** Options of a transport and of a {@link TaskyardClient}, and the per-call options every method takes. */
import type { Transport } from "@connectrpc/connect";

/** TLS settings. `ca` replaces the system roots: the PEM of the CA that signed the gateway's certificate. */
export interface TlsOptions {
  /** PEM text or bytes of the CA to trust instead of the system roots. */
  ca?: string | Uint8Array;
  /** The name to check the gateway's certificate against, when it differs from the target's host. */
  serverName?: string;
}

/** How to reach a gateway: what {@link createTaskyardTransport} and a {@link TaskyardClient} take. */
export interface ConnectionOptions {
  /** Sent as `authorization: Bearer <token>` on every call. */
  token?: string;
  /**
   * TLS with the system roots by default. `false` is plaintext, meant for a loopback
   * `taskyard dev`: a token is never sent in clear to any other host.
   */
  tls?: TlsOptions | false;
  /** Deadline of each call unless the call gives its own; default 30 000 ms; 0: none. */
  timeoutMs?: number;
  /** Attempts of a call refused with UNAVAILABLE, the first included; default 4. 1 disables retries. */
  maxAttempts?: number;
  /**
   * An operator token acting as this one tenant: every call carries `taskyard-tenant`, and
   * the gateway answers as it would that tenant's token (docs/tenants.md). 1 to 64
   * characters of [a-z0-9-]; default none.
   */
  tenant?: string;
}

export interface ClientOptions extends ConnectionOptions {
  /**
   * Calls go through this Connect transport as it is (one from createTaskyardTransport
   * shared with other services, an in-memory router in tests, a custom stack): `tls`,
   * `token` and `maxAttempts` are then the transport's business, and closing it is the
   * caller's (the client's `close()` only ends its own calls).
   */
  transport?: Transport;
}

/** What every method accepts last. */
export interface CallOptions {
  /** Aborting it cancels the call (the method rejects with code CANCELED). */
  signal?: AbortSignal;
  /** This call's deadline; rejects with DEADLINE_EXCEEDED when it passes. 0: none. */
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 4;

/** `host:port` -> the URL Connect dials, checking the form early rather than at the first call. */
export function baseUrl(target: string, tls: boolean): URL {
  if (!/^(\[[0-9a-fA-F:.]+\]|[^:/\s[\]]+):\d{1,5}$/.test(target)) {
    throw new TypeError(`target must be "host:port" (or "[ipv6]:port"), got ${JSON.stringify(target)}`);
  }
  return new URL(`${tls ? "https" : "http"}://${target}`);
}

/** Loopback as the gateway defines it: 127.0.0.0/8, ::1 and the name localhost (no DNS). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
