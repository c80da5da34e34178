/** What every call carries (the token) and how a transient refusal is retried. */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";

export function bearerToken(token: string): Interceptor {
  const value = `Bearer ${token}`;
  return (next) => (req) => {
    req.header.set("authorization", value);
    return next(req);
  };
}

/** The tenant an operator token acts as, on every call (metadata `taskyard-tenant`). */
export function actingTenant(tenant: string): Interceptor {
  return (next) => (req) => {
    req.header.set("taskyard-tenant", tenant);
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
 * The methods a repeat cannot change the outcome of: reads, and submits (the request id
 * makes a repeat return the first task). CancelTask is not one: a repeat of a cancel
 * that took effect answers TASK_ALREADY_FINAL. The same list in every Taskyard client.
 */
export const RETRIED_METHODS: ReadonlySet<string> = new Set([
  "taskyard.v1.TaskService/SubmitTask",
  "taskyard.v1.TaskService/BatchSubmitTasks",
  "taskyard.v1.TaskService/RunTask",
  "taskyard.v1.TaskService/GetTask",
  "taskyard.v1.TaskService/WaitTask",
  "taskyard.v1.TaskService/ListTasks",
  "taskyard.v1.TaskService/GetTaskTree",
  "taskyard.v1.TaskService/ExplainTask",
  "taskyard.v1.TaskService/GetTaskLogs",
  "taskyard.v1.TaskService/StreamTaskLogs",
  "taskyard.v1.QueueService/GetQueueStatus",
  "taskyard.v1.QueueService/ListServers",
  "taskyard.v1.ScheduleService/GetSchedule",
  "taskyard.v1.ScheduleService/ListSchedules",
  "taskyard.v1.LimitService/GetLimit",
  "taskyard.v1.LimitService/ListLimits",
  "taskyard.v1.LimitService/ListKeyWeights",
  "taskyard.v1.FailureService/ListFailureGroups",
  "taskyard.v1.FailureService/ListFailures",
  "taskyard.v1.FailureService/GetRedrive",
  "taskyard.v1.FailureService/ListRedrives",
  "taskyard.v1.FailureService/ListRedriveItems",
  "taskyard.v1.TenantService/GetTenant",
  "taskyard.v1.TenantService/ListTenants",
]);

const TIMEOUT_HEADER = "grpc-timeout";
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 1e-3, n: 1e-6 };

/** When the call's deadline passes, read from the grpc-timeout Connect set just before the interceptors. */
function deadlineOf(header: Headers): number | undefined {
  const m = /^(\d{1,8})([HMSmun])$/.exec(header.get(TIMEOUT_HEADER) ?? "");
  return m ? Date.now() + Number(m[1]) * (TIMEOUT_UNIT_MS[m[2]] ?? 1) : undefined;
}

/**
 * Resends the same unary request (so the same request_id: a submit stays exactly-once)
 * while the gateway is UNAVAILABLE, within the call's own deadline and signal, for the
 * methods of {@link RETRIED_METHODS}. A stream's request is consumed as it is sent, so
 * streams are never resent (the client opens none).
 */
export function retryUnavailable(maxAttempts: number): Interceptor {
  return (next) => async (req) => {
    const name = `${req.service.typeName}/${req.method.name}`;
    if (req.stream || maxAttempts <= 1 || !RETRIED_METHODS.has(name)) return next(req);
    const deadline = deadlineOf(req.header);
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (err) {
        const code = err instanceof ConnectError ? err.code : undefined;
        if (code !== Code.Unavailable || attempt >= maxAttempts || req.signal.aborted) throw err;
        await sleep(backoffMs(attempt), req.signal);
        // The deadline (or the caller's signal) is what ended the call now, not the refusal.
        if (req.signal.aborted) throw ConnectError.from(req.signal.reason, Code.Canceled);
        if (deadline !== undefined) {
          const left = Math.floor(deadline - Date.now());
          if (left <= 0) throw new ConnectError("the operation timed out", Code.DeadlineExceeded);
          // Connect wrote the header once, for the first attempt; the gateway must see what is left.
          req.header.set(TIMEOUT_HEADER, `${left}m`);
        }
      }
    }
  };
}
