/**
 * The HTTP/2 transport every Taskyard call goes through, made public so that the Queue,
 * Schedule and Event services can be called with the same TLS, token, retries and
 * default deadline as the {@link TaskyardClient}.
 */
import type * as http2 from "node:http2";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager, type GrpcTransportOptions } from "@connectrpc/connect-node";
import { checkMs } from "./convert.js";
import { actingTenant, bearerToken, retryUnavailable } from "./interceptors.js";
import { checkTenant } from "./tenants.js";
import { baseUrl, DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_MS, isLoopback, type ConnectionOptions } from "./options.js";
import { traceContext } from "./trace.js";

/** A Connect transport to one gateway, over one HTTP/2 connection opened at the first call. */
export interface TaskyardTransport extends Transport {
  /**
   * Ends the connection: calls still running are cancelled, then the connection says
   * GOAWAY with NO_ERROR and closes, as a client that leaves on purpose should (a
   * connection torn down with CANCEL is an error in the gateway's log). Later calls
   * reject with CANCELED. Resolves once the connection is closed; calling it again is harmless.
   */
  close(): Promise<void>;
}

/** Connect's interface for it is not exported under its own name. */
type SessionManager = NonNullable<GrpcTransportOptions["sessionManager"]>;

/** NGHTTP2_CANCEL, for a stream asked for after close (node:http2 is only imported as a type). */
const HTTP2_CANCEL = 0x8;

/**
 * Connect's session manager can only abort its connection (GOAWAY with CANCEL). This one
 * keeps the sessions its streams run on, so that close can end them with GOAWAY NO_ERROR
 * once their streams are done.
 */
class GracefulSessionManager implements SessionManager {
  readonly authority: string;
  readonly #inner: Http2SessionManager;
  readonly #sessions = new Set<http2.ClientHttp2Session>();
  readonly #closing = new AbortController();

  constructor(url: URL, sessionOptions: http2.SecureClientSessionOptions) {
    this.#inner = new Http2SessionManager(url, {}, sessionOptions);
    this.authority = this.#inner.authority;
  }

  /** Aborted by close: the signal every call of the transport also listens to. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    if (this.#closing.signal.aborted) throw closedError();
    const stream = await this.#inner.request(method, path, headers, options);
    const session = stream.session as http2.ClientHttp2Session | undefined;
    if (this.#closing.signal.aborted) {
      // close ran while this connection was being opened: it never saw this session.
      stream.close(HTTP2_CANCEL);
      session?.close();
      throw closedError();
    }
    if (session && !this.#sessions.has(session)) {
      this.#sessions.add(session);
      session.once("close", () => this.#sessions.delete(session));
    }
    return stream;
  }

  notifyResponseByteRead(stream: http2.ClientHttp2Stream): void {
    this.#inner.notifyResponseByteRead(stream);
  }

  async close(): Promise<void> {
    this.#closing.abort(closedError());
    const open = [...this.#sessions].filter((s) => !s.destroyed);
    await Promise.all(open.map(closeGracefully));
  }
}

/**
 * How long close waits for the streams it cancelled to end before it drops the connection.
 * The timer also keeps the process alive meanwhile: Connect unrefs an idle session, and a
 * process ending with close would otherwise exit before its GOAWAY is sent.
 */
const CLOSE_TIMEOUT_MS = 5_000;

function closeGracefully(session: http2.ClientHttp2Session): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => session.destroy(), CLOSE_TIMEOUT_MS);
    session.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    // Says GOAWAY(NO_ERROR) now, and closes once the cancelled streams are gone.
    session.close();
  });
}

function closedError(): ConnectError {
  return new ConnectError("the client is closed", Code.Canceled);
}

/**
 * Every call also ends when the transport closes, so that close never waits on a long
 * call. A stream keeps listening until its last message has been read.
 */
function endsOnClose(closing: AbortSignal): Interceptor {
  return (next) => async (req) => {
    if (closing.aborted) throw closedError();
    const call = new AbortController();
    const forward = (): void => call.abort(req.signal.aborted ? req.signal.reason : closing.reason);
    const release = (): void => {
      req.signal.removeEventListener("abort", forward);
      closing.removeEventListener("abort", forward);
    };
    if (req.signal.aborted) forward();
    req.signal.addEventListener("abort", forward, { once: true });
    closing.addEventListener("abort", forward, { once: true });
    let res;
    try {
      res = await next({ ...req, signal: call.signal });
    } catch (err) {
      release();
      throw err;
    }
    if (!res.stream) {
      release();
      return res;
    }
    return { ...res, message: releasing(res.message, release) };
  };
}

async function* releasing<T>(messages: AsyncIterable<T>, release: () => void): AsyncGenerator<T> {
  try {
    yield* messages;
  } finally {
    release();
  }
}

/**
 * A transport to the gateway at `target` (`host:port`), with what {@link ConnectionOptions}
 * says: TLS (system roots by default; `tls: false` only for a loopback gateway when a
 * token is given), the bearer token, resending of UNAVAILABLE reads and submits, the
 * default deadline of each unary call (`timeoutMs`; a stream has none unless given), and
 * W3C trace context when OpenTelemetry is present.
 *
 * Give it to `createClient(QueueService, transport)` (Connect) to call any Taskyard
 * service, and to `new TaskyardClient(target, { transport })` to share the connection.
 */
export function createTaskyardTransport(target: string, options: ConnectionOptions = {}): TaskyardTransport {
  const timeoutMs = checkMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, "timeoutMs");
  const tls = options.tls === false ? undefined : (options.tls ?? {});
  const url = baseUrl(target, tls !== undefined);
  const tenant = options.tenant ? checkTenant(options.tenant) : undefined;
  if (options.token && !tls && !isLoopback(url.hostname)) {
    throw new TypeError(`refusing to send a token in clear to ${target}: use TLS, or plaintext only on loopback`);
  }
  const sessions = new GracefulSessionManager(
    url,
    tls ? { ca: tls.ca === undefined ? undefined : Buffer.from(tls.ca), servername: tls.serverName } : {},
  );
  const interceptors: Interceptor[] = [endsOnClose(sessions.closing), retryUnavailable(options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)];
  if (options.token) interceptors.push(bearerToken(options.token));
  if (tenant) interceptors.push(actingTenant(tenant));
  interceptors.push(traceContext);
  const transport = createGrpcTransport({
    baseUrl: url.origin,
    sessionManager: sessions,
    interceptors,
  });
  // The default deadline is for unary calls (Connect reads 0 as none, as the client does).
  // A stream (WatchEvents) runs until its signal, its own timeoutMs or close ends it.
  const defaultMs = timeoutMs === 0 ? 0 : Math.ceil(timeoutMs);
  return {
    unary: (method, signal, ms, header, input, values) =>
      transport.unary(method, signal, ms ?? defaultMs, header, input, values),
    stream: (method, signal, ms, header, input, values) =>
      transport.stream(method, signal, ms, header, input, values),
    close: () => sessions.close(),
  };
}
