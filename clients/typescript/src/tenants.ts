/** Tenants (TenantService), for operator tokens: `client.tenants`. */
import { create } from "@bufbuild/protobuf";
import { durationMs, timestampDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { durationFromMs } from "./convert.js";
import { RateLimitSchema } from "./gen/taskyard/v1/limit_pb.js";
import {
  TenantQuotaSchema,
  TenantSchema,
  TenantState as PbTenantState,
  type Tenant as PbTenant,
  type TenantService,
} from "./gen/taskyard/v1/tenant_service_pb.js";
import type { RateLimit } from "./limits.js";
import type { CallOptions } from "./options.js";

/** The gRPC metadata key with which an operator token acts as one tenant (the `tenant` option). */
export const TENANT_METADATA_KEY = "taskyard-tenant";
const TENANT_NAME = /^[a-z0-9-]{1,64}$/;

/** A tenant's name as the gateway checks it: 1 to 64 characters of [a-z0-9-]; a TypeError otherwise. */
export function checkTenant(name: string): string {
  if (!TENANT_NAME.test(name)) {
    throw new TypeError(`tenant must be 1 to 64 characters of [a-z0-9-], got ${JSON.stringify(name)}`);
  }
  return name;
}

export type TenantState = "UNSPECIFIED" | "ACTIVE" | "SUSPENDED";

/** What `create` and `update` take (`update` replaces the quota, the weight and the description). */
export interface TenantDefinition {
  /** 1 to 64 characters of [a-z0-9-]. */
  name: string;
  /** Attempts of its tasks running at once; default 0: no bound. */
  maxConcurrency?: number;
  /** Attempts of its tasks started per period; default none: no bound. */
  rate?: RateLimit;
  /** Its share in fair share against the other tenants, 1 to 1000; default 0: 1. */
  weight?: number;
  /** At most 1,024 characters. */
  description?: string;
}

/** A tenant as the gateway stores it. */
export interface TenantInfo {
  name: string;
  state: TenantState;
  maxConcurrency: number;
  rate?: Required<RateLimit>;
  weight: number;
  description: string;
  createdAt?: Date;
  updatedAt?: Date;
  /** Set while suspended. */
  suspendedAt?: Date;
}

/** One page of tenants, by name. */
export interface TenantPage {
  tenants: TenantInfo[];
  /** "" on the last page. */
  nextPageToken: string;
}

export interface ListTenantsOptions extends CallOptions {
  /** 1..1000; default 100. */
  pageSize?: number;
  /** A previous page's nextPageToken. */
  pageToken?: string;
}

export interface SuspendTenantOptions extends CallOptions {
  /** Kept in the audit event (tenant.suspended). */
  reason?: string;
}

type Caller = <T>(options: CallOptions, fn: (call: CallOptions) => Promise<T>) => Promise<T>;

function whole(n: number | undefined, what: string): number {
  if (n === undefined) return 0;
  if (!Number.isSafeInteger(n)) throw new TypeError(`${what} must be a whole number, got ${String(n)}`);
  return n;
}

export function toTenant(def: TenantDefinition): PbTenant {
  const rate =
    def.rate === undefined
      ? undefined
      : create(RateLimitSchema, {
          units: BigInt(whole(def.rate.units, "tenant.quota.rate.units")),
          period: durationFromMs(def.rate.periodMs, "tenant.quota.rate.periodMs"),
          burst: BigInt(whole(def.rate.burst, "tenant.quota.rate.burst")),
        });
  return create(TenantSchema, {
    name: def.name,
    weight: whole(def.weight, "tenant.weight"),
    description: def.description ?? "",
    quota: create(TenantQuotaSchema, {
      maxConcurrency: BigInt(whole(def.maxConcurrency, "tenant.quota.maxConcurrency")),
      rate,
    }),
  });
}

export function toTenantInfo(t: PbTenant | undefined): TenantInfo {
  if (!t) throw new TypeError("the gateway answered without a tenant");
  const r = t.quota?.rate;
  return {
    name: t.name,
    state: (PbTenantState[t.state] ?? "TENANT_STATE_UNSPECIFIED").replace("TENANT_STATE_", "") as TenantState,
    maxConcurrency: Number(t.quota?.maxConcurrency ?? 0n),
    rate: r && { units: Number(r.units), periodMs: r.period ? durationMs(r.period) : 0, burst: Number(r.burst) },
    weight: t.weight,
    description: t.description,
    createdAt: t.createdAt ? timestampDate(t.createdAt) : undefined,
    updatedAt: t.updatedAt ? timestampDate(t.updatedAt) : undefined,
    suspendedAt: t.suspendedAt ? timestampDate(t.suspendedAt) : undefined,
  };
}

/**
 * Tenants: `client.tenants`. Every call but `get` takes an operator token (one without
 * `tenant=` in the gateway's tokens file): a tenant token gets PERMISSION_DENIED, reason
 * OPERATOR_ONLY. A tenant token may `get` its own tenant. Errors are {@link TaskyardError}s.
 */
export class Tenants {
  readonly #rpc: Client<typeof TenantService>;
  readonly #call: Caller;

  /** Made by the client; use `client.tenants`. */
  constructor(rpc: Client<typeof TenantService>, call: Caller) {
    this.#rpc = rpc;
    this.#call = call;
  }

  /** Stores a new tenant, active; a name already taken is ALREADY_EXISTS. */
  async create(tenant: TenantDefinition, options: CallOptions = {}): Promise<TenantInfo> {
    const wire = toTenant(tenant);
    const res = await this.#call(options, (call) => this.#rpc.createTenant({ tenant: wire }, call));
    return toTenantInfo(res.tenant);
  }

  /** The tenant named `name`; NOT_FOUND when there is none (or, for a tenant token, not its own). */
  async get(name: string, options: CallOptions = {}): Promise<TenantInfo> {
    const res = await this.#call(options, (call) => this.#rpc.getTenant({ name }, call));
    return toTenantInfo(res.tenant);
  }

  /** One page of tenants, by name. */
  async list(options: ListTenantsOptions = {}): Promise<TenantPage> {
    const res = await this.#call(options, (call) =>
      this.#rpc.listTenants({ pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { tenants: res.tenants.map(toTenantInfo), nextPageToken: res.nextPageToken };
  }

  /** Every tenant, page after page as the loop asks for them. */
  async *all(options: Omit<ListTenantsOptions, "pageToken"> = {}): AsyncGenerator<TenantInfo, void, undefined> {
    let pageToken = "";
    do {
      const page = await this.list({ ...options, pageToken });
      yield* page.tenants;
      // A page pointing back at itself would loop for ever.
      if (page.nextPageToken && page.nextPageToken === pageToken) {
        throw new Error(`the gateway answered page token ${JSON.stringify(pageToken)} with itself`);
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /** Replaces the quota, the weight and the description of `tenant.name`; NOT_FOUND when there is none. */
  async update(tenant: TenantDefinition, options: CallOptions = {}): Promise<TenantInfo> {
    const wire = toTenant(tenant);
    const res = await this.#call(options, (call) => this.#rpc.updateTenant({ tenant: wire }, call));
    return toTenantInfo(res.tenant);
  }

  /**
   * Stops the tenant's dispatch and refuses its submissions (FAILED_PRECONDITION, reason
   * TENANT_SUSPENDED); nothing it had is lost, attempts already running finish.
   */
  async suspend(name: string, options: SuspendTenantOptions = {}): Promise<TenantInfo> {
    const res = await this.#call(options, (call) =>
      this.#rpc.suspendTenant({ name, reason: options.reason ?? "" }, call),
    );
    return toTenantInfo(res.tenant);
  }

  /** Dispatches the tenant's tasks and takes its submissions again. */
  async resume(name: string, options: CallOptions = {}): Promise<TenantInfo> {
    const res = await this.#call(options, (call) => this.#rpc.resumeTenant({ name }, call));
    return toTenantInfo(res.tenant);
  }
}
