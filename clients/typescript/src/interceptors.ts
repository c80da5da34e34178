/** What every call carries (the token) and how a transient refusal is retried. */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export function bearerToken(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => (req) => {
    req.header.set("authorization", value);
    return next(req);
  };
}

/** Exponential with jitter so that many clients cut off together do not come back in step. */
function backoffMs(attempt: number): number {
  const base = Math.min(100 * 2 ** (attempt - 1), 2_000);
  return base / 2 + Math.random() * (base / 2);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Resends the same unary request (so the same request_id: a submit stays exactly-once)
 * while the gateway is UNAVAILABLE, within the call's own deadline and signal.
 */
export function retryUnavailable(maxAttempts: number): Interceptor {
  return (next) => async (req) => {
    if (req.stream || maxAttempts <= 1) return next(req);
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const code = err instanceof ConnectError ? err.code : undefined;
        if (code !== Code.Unavailable || attempt >= maxAttempts || req.signal.aborted) throw err;
        await sleep(backoffMs(attempt), req.signal);
        if (req.signal.aborted) throw err;
      }
    }
  };
}
