/** Named limits and fairness weights (LimitService): `client.limits`. */
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { durationFromMs } from "./convert.js";
import {
  CircuitBreakerSchema,
  ConcurrencyLimitSchema,
  KeyWeightSchema,
  LimitSchema,
  LimitUseSchema,
  RateLimitSchema,
  type CircuitBreaker as PbCircuitBreaker,
  type Limit as PbLimit,
  type LimitUse as PbLimitUse,
} from "./gen/taskyard/v1/limit_pb.js";
import type { LimitService } from "./gen/taskyard/v1/limit_service_pb.js";
import type { CallOptions } from "./options.js";

/** A task's use of one limit (`limits` of a submit). */
export interface LimitUse {
  /** The limit's name; an unknown one is INVALID_ARGUMENT, reason UNKNOWN_LIMIT. */
  limit: string;
  /** The bucket of a per-key limit, e.g. "customer:42" (at most 256 bytes); a global limit ignores it. */
  key?: string;
  /** Units the task takes; default 1. At most the limit's burst (rate) or maxUnits (concurrency); a breaker takes none. */
  units?: number;
}

/** At most `units` per `periodMs`, in bursts of up to `burst` (default `units`). */
export interface RateLimit {
  units: number;
  /** 1 ms to 1 day, whole milliseconds. */
  periodMs: number;
  burst?: number;
}

/** At most `maxUnits` units held by attempts leased to a pool or running. */
export interface ConcurrencyLimit {
  maxUnits: number;
}

/**
 * A circuit breaker: it opens when `failureThreshold` attempts that use it failed within `windowMs`
 * (a throttling answer or any other failure), holds its tasks for `coolDownMs`, then admits
 * `halfOpenProbes` attempts at once: a probe's success closes it, a failure opens it again. Per key
 * (`perKey`) each downstream key, e.g. "payments-api", has a breaker of its own.
 */
export interface CircuitBreaker {
  /** 1 to 1,000,000. */
  failureThreshold: number;
  /** How far back attempts count: 1 ms to 1 day, whole milliseconds; default (unset) 60 s. */
  windowMs?: number;
  /** Attempts ended within the window before it may open, at most 1,000,000; default 0: `failureThreshold`. */
  minAttempts?: number;
  /** How long it stays open before a probe: 1 ms to 1 day, whole milliseconds; default (unset) 30 s. */
  coolDownMs?: number;
  /** Attempts admitted at once while half-open, at most 1000; default 0: 1. */
  halfOpenProbes?: number;
}

/** A breaker as the gateway stores it: `windowMs` and `coolDownMs` are undefined where unset (60 s, 30 s). */
export interface CircuitBreakerInfo {
  failureThreshold: number;
  windowMs?: number;
  minAttempts: number;
  coolDownMs?: number;
  halfOpenProbes: number;
}

/** What `create` and `update` take: exactly one of `rate`, `concurrency` and `breaker`. */
export interface LimitDefinition {
  /** 1 to 128 characters: an ASCII letter or digit, then letters, digits, '.', '_', ':' or '-'. */
  name: string;
  rate?: RateLimit;
  concurrency?: ConcurrencyLimit;
  breaker?: CircuitBreaker;
  /** True: each key has its own bucket ("at most 3 per customer"); default false: one bucket for all. */
  perKey?: boolean;
  description?: string;
  /** Set on a limit a task declares: every task of this name uses it, keyed by its keyword argument `keyArgument`. */
  taskName?: string;
  keyArgument?: string;
}

/** One key's share of a limit's usage. */
export interface KeyUsage {
  key: string;
  unitsInUse: number;
  waiting: number;
}

/** What a limit holds back now, on the leading scheduler. */
export interface LimitUsage {
  /** Units held (concurrency) or admitted in the last period (rate), all keys; a breaker's keys open or half-open. */
  unitsInUse: number;
  /** Attempts admitted and held back since the scheduler's term began. */
  admitted: number;
  throttled: number;
  /** Queued tasks waiting at this limit now. */
  waiting: number;
  /** Keys with a bucket now. */
  keys: number;
  /** The busiest keys, at most 10. */
  busiestKeys: KeyUsage[];
}

/** A limit as the gateway stores it. */
export interface LimitInfo {
  name: string;
  rate?: Required<RateLimit>;
  concurrency?: ConcurrencyLimit;
  breaker?: CircuitBreakerInfo;
  perKey: boolean;
  description: string;
  taskName: string;
  keyArgument: string;
  createdAt?: Date;
  updatedAt?: Date;
  /** The leading scheduler's live view; undefined when no scheduler answered. */
  usage?: LimitUsage;
}

/** One page of limits, by name. */
export interface LimitPage {
  limits: LimitInfo[];
  /** "" on the last page. */
  nextPageToken: string;
}

/** A fairness key's weight: a key of weight 3 is served three tasks for every one of a key of weight 1. */
export interface KeyWeight {
  key: string;
  /** 1 to 1000; keys without one have 1. */
  weight: number;
}

export interface ListLimitsOptions extends CallOptions {
  /** 1..1000; default 100. */
  pageSize?: number;
  /** A previous page's nextPageToken. */
  pageToken?: string;
}

export interface DeleteLimitOptions extends CallOptions {
  /** Delete it even while tasks that are not final use it: they run without it. */
  force?: boolean;
}

/** How the client runs a call: its deadline, its cancellation, its errors. */
export type Caller = <T>(options: CallOptions, fn: (call: CallOptions) => Promise<T>) => Promise<T>;

/** An int64 field from a count: a whole number the wire can carry. */
function int64(n: number | undefined, what: string): bigint {
  if (n === undefined) return 0n;
  if (!Number.isSafeInteger(n)) throw new TypeError(`${what} must be a whole number, got ${String(n)}`);
  return BigInt(n);
}

/** The wire form of a task's limit uses; `path` prefixes the names in client-side errors. */
export function toLimitUses(uses: readonly LimitUse[] | undefined, path: string): PbLimitUse[] {
  return (uses ?? []).map((u, i) =>
    create(LimitUseSchema, {
      limit: u.limit,
      key: u.key ?? "",
      units: int64(u.units, `${path}[${i}].units`),
    }),
  );
}

export function fromLimitUses(uses: readonly PbLimitUse[]): Required<LimitUse>[] {
  return uses.map((u) => ({ limit: u.limit, key: u.key, units: Number(u.units) }));
}

function toBreaker(b: CircuitBreaker): PbCircuitBreaker {
  // An unset duration takes the gateway's default; any number given is sent for it to check.
  return create(CircuitBreakerSchema, {
    failureThreshold: int64(b.failureThreshold, "limit.breaker.failureThreshold"),
    window: b.windowMs === undefined ? undefined : durationFromMs(b.windowMs, "limit.breaker.windowMs"),
    minAttempts: int64(b.minAttempts, "limit.breaker.minAttempts"),
    coolDown: b.coolDownMs === undefined ? undefined : durationFromMs(b.coolDownMs, "limit.breaker.coolDownMs"),
    halfOpenProbes: int64(b.halfOpenProbes, "limit.breaker.halfOpenProbes"),
  });
}

function fromBreaker(b: PbCircuitBreaker): CircuitBreakerInfo {
  return {
    failureThreshold: Number(b.failureThreshold),
    windowMs: b.window ? durationMs(b.window) : undefined,
    minAttempts: Number(b.minAttempts),
    coolDownMs: b.coolDown ? durationMs(b.coolDown) : undefined,
    halfOpenProbes: Number(b.halfOpenProbes),
  };
}

function toLimit(def: LimitDefinition): PbLimit {
  const kinds = [def.rate, def.concurrency, def.breaker].filter((k) => k !== undefined).length;
  if (kinds > 1) {
    throw new TypeError("limit: rate, concurrency and breaker are exclusive");
  }
  const limit = create(LimitSchema, {
    name: def.name,
    perKey: def.perKey ?? false,
    description: def.description ?? "",
    taskName: def.taskName ?? "",
    keyArgument: def.keyArgument ?? "",
  });
  if (def.rate !== undefined) {
    const rate = create(RateLimitSchema, {
      units: int64(def.rate.units, "limit.rate.units"),
      period: durationFromMs(def.rate.periodMs, "limit.rate.periodMs"),
      burst: int64(def.rate.burst, "limit.rate.burst"),
    });
    limit.kind = { case: "rate", value: rate };
  } else if (def.concurrency !== undefined) {
    const maxUnits = int64(def.concurrency.maxUnits, "limit.concurrency.maxUnits");
    limit.kind = { case: "concurrency", value: create(ConcurrencyLimitSchema, { maxUnits }) };
  } else if (def.breaker !== undefined) {
    limit.kind = { case: "breaker", value: toBreaker(def.breaker) };
  }
  return limit;
}

export function toLimitInfo(l: PbLimit | undefined): LimitInfo {
  if (!l) throw new TypeError("the gateway answered without a limit");
  const u = l.usage;
  return {
    name: l.name,
    rate:
      l.kind.case === "rate"
        ? {
            units: Number(l.kind.value.units),
            periodMs: l.kind.value.period ? durationMs(l.kind.value.period) : 0,
            burst: Number(l.kind.value.burst),
          }
        : undefined,
    concurrency: l.kind.case === "concurrency" ? { maxUnits: Number(l.kind.value.maxUnits) } : undefined,
    breaker: l.kind.case === "breaker" ? fromBreaker(l.kind.value) : undefined,
    perKey: l.perKey,
    description: l.description,
    taskName: l.taskName,
    keyArgument: l.keyArgument,
    createdAt: l.createdAt ? timestampDate(l.createdAt) : undefined,
    updatedAt: l.updatedAt ? timestampDate(l.updatedAt) : undefined,
    usage: u && {
      unitsInUse: Number(u.unitsInUse),
      admitted: Number(u.admitted),
      throttled: Number(u.throttled),
      waiting: Number(u.waiting),
      keys: Number(u.keys),
      busiestKeys: u.busiestKeys.map((k) => ({
        key: k.key,
        unitsInUse: Number(k.unitsInUse),
        waiting: Number(k.waiting),
      })),
    },
  };
}

/**
 * Named rate limits, concurrency limits and circuit breakers, and fairness weights: `client.limits`. Changes take a
 * token with the `admin` scope, reads `read`. Errors are {@link TaskyardError}s, as for tasks.
 */
export class Limits {
  readonly #rpc: Client<typeof LimitService>;
  readonly #call: Caller;

  /** Made by the client; use `client.limits`. */
  constructor(rpc: Client<typeof LimitService>, call: Caller) {
    this.#rpc = rpc;
    this.#call = call;
  }

  /** Stores a new limit; a name already taken is ALREADY_EXISTS. */
  async create(limit: LimitDefinition, options: CallOptions = {}): Promise<LimitInfo> {
    const wire = toLimit(limit);
    const res = await this.#call(options, (call) => this.#rpc.createLimit({ limit: wire }, call));
    return toLimitInfo(res.limit);
  }

  /** The limit named `name`, with its usage when the scheduler answers. */
  async get(name: string, options: CallOptions = {}): Promise<LimitInfo> {
    const res = await this.#call(options, (call) => this.#rpc.getLimit({ name }, call));
    return toLimitInfo(res.limit);
  }

  /** One page of limits, by name. */
  async list(options: ListLimitsOptions = {}): Promise<LimitPage> {
    const res = await this.#call(options, (call) =>
      this.#rpc.listLimits({ pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { limits: res.limits.map(toLimitInfo), nextPageToken: res.nextPageToken };
  }

  /** Every limit, page after page as the loop asks for them. */
  async *all(options: Omit<ListLimitsOptions, "pageToken"> = {}): AsyncGenerator<LimitInfo, void, undefined> {
    let pageToken = "";
    do {
      const page = await this.list({ ...options, pageToken });
      yield* page.limits;
      // A page pointing back at itself would loop for ever.
      if (page.nextPageToken && page.nextPageToken === pageToken) {
        throw new Error(`the gateway answered page token ${JSON.stringify(pageToken)} with itself`);
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** Replaces the definition of the limit named `limit.name`; NOT_FOUND when there is none. */
  async update(limit: LimitDefinition, options: CallOptions = {}): Promise<LimitInfo> {
    const wire = toLimit(limit);
    const res = await this.#call(options, (call) => this.#rpc.updateLimit({ limit: wire }, call));
    return toLimitInfo(res.limit);
  }

  /**
   * Deletes the limit named `name`. While tasks that are not final use it, FAILED_PRECONDITION
   * unless `force`: then they run without it. Resolves to how many tasks were released.
   */
  async delete(name: string, options: DeleteLimitOptions = {}): Promise<number> {
    const res = await this.#call(options, (call) =>
      this.#rpc.deleteLimit({ name, force: options.force ?? false }, call),
    );
    return Number(res.tasksReleased);
  }

  /** Sets the fairness weight of `key` (1 to 1000); 0 removes it (back to 1). */
  async setKeyWeight(key: string, weight: number, options: CallOptions = {}): Promise<KeyWeight> {
    if (!Number.isInteger(weight) || weight < 0 || weight > 2 ** 31 - 1) {
      throw new TypeError(`weight.weight must be a whole number from 0, got ${String(weight)}`);
    }
    const res = await this.#call(options, (call) =>
      this.#rpc.setKeyWeight({ weight: create(KeyWeightSchema, { key, weight }) }, call),
    );
    return { key: res.weight?.key ?? key, weight: res.weight?.weight ?? 0 };
  }

  /** Every fairness weight set, by key. */
  async listKeyWeights(options: CallOptions = {}): Promise<KeyWeight[]> {
    const res = await this.#call(options, (call) => this.#rpc.listKeyWeights({}, call));
    return res.weights.map((w) => ({ key: w.key, weight: w.weight }));
  }
}
