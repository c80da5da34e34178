/** Dead letters, their groups, their redrive and their purge (FailureService): `client.failures`. */
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { deadLetterReasonName, deadLetterReasonValue, toFailure } from "./convert.js";
import {
  FailureFilterSchema,
  RedriveOutcome as PbRedriveOutcome,
  RedriveState as PbRedriveState,
  type DeadLetter as PbDeadLetter,
  type FailureFilter as PbFailureFilter,
  type FailureGroup as PbFailureGroup,
  type FailureService,
  type Redrive as PbRedrive,
  type RedriveItem as PbRedriveItem,
} from "./gen/taskyard/v1/failure_service_pb.js";
import type { Caller } from "./limits.js";
import type { CallOptions } from "./options.js";
import type { DeadLetterReason, TaskFailure } from "./types.js";

/** Where a redrive is: RUNNING, PAUSED, then DONE (every task taken or skipped) or CANCELLED. */
export type RedriveState = "UNSPECIFIED" | "RUNNING" | "PAUSED" | "DONE" | "CANCELLED";

/** What a redrive did with one task it matched; CANCELLED: it was cancelled first (still a dead letter). */
export type RedriveOutcome = "UNSPECIFIED" | "PENDING" | "REQUEUED" | "SKIPPED" | "CANCELLED";

/** The most ids one filter may name. */
export const MAX_FILTER_TASK_IDS = 1000;
/** The fastest a redrive may re-queue, in tasks a second. */
export const MAX_REDRIVE_RATE = 10_000;

/**
 * Which dead letters a call is about: the conjunction of what is set. The gateway refuses a
 * filter with nothing set unless `all` is true (INVALID_ARGUMENT on `filter`).
 */
export interface FailureFilter {
  /** A group's `groupId`. */
  groupId?: string;
  queue?: string;
  /** A task name. */
  name?: string;
  /** The final failure happened at or after / before these instants. */
  failedAfter?: Date;
  failedBefore?: Date;
  /** Every one of these labels, with these values. */
  labels?: Record<string, string>;
  /** At most 1,000 ids. */
  taskIds?: readonly string[];
  reason?: DeadLetterReason;
  /** Match every dead letter: required when nothing else is set. */
  all?: boolean;
}

/** The dead letters of one queue, task name and failure fingerprint. */
export interface FailureGroup {
  /** Stable for a queue, name and fingerprint: use it in a filter. */
  groupId: string;
  queue: string;
  name: string;
  /** The fingerprint: exception type, message with numbers, ids and quoted values masked, and frame. */
  type: string;
  message: string;
  /** The innermost frame of the task's own code ("module.function"); "" without a traceback. */
  frame: string;
  /** Dead-lettered tasks in the group now. */
  count: number;
  firstSeen?: Date;
  lastSeen?: Date;
  /** Up to 5 ids, newest first. */
  sampleTaskIds: string[];
  /** The newest one's traceback. */
  sampleTraceback: string;
}

/** A task whose failure is final. */
export interface DeadLetter {
  taskId: string;
  queue: string;
  name: string;
  reason: DeadLetterReason;
  groupId: string;
  /** Its final failure. */
  failure?: TaskFailure;
  labels: Record<string, string>;
  /** Times it was redriven before and failed again. */
  redrives: number;
}

/** A redrive and its progress: its own audit record. */
export interface Redrive {
  id: string;
  filter: FailureFilter;
  /** Tasks a second, at most. */
  rate: number;
  state: RedriveState;
  /** The name of the token it was asked with ("dev" on a loopback gateway without tokens). */
  createdBy: string;
  createdAt?: Date;
  updatedAt?: Date;
  /** Set once DONE or CANCELLED. */
  finishedAt?: Date;
  /** Tasks matched when it was accepted. */
  matched: number;
  /** Re-queued as a new attempt so far. */
  requeued: number;
  /** No longer a dead letter when their turn came: left as they were. */
  skipped: number;
  note: string;
}

/** What became of one task a redrive matched. */
export interface RedriveItem {
  taskId: string;
  outcome: RedriveOutcome;
  /** The failed attempt it was taken from, and the attempt it was given. */
  failedAttempt: number;
  newAttempt: number;
  at?: Date;
  /** Why it was skipped. */
  detail: string;
}

export interface RedriveResult {
  /** The redrive accepted; undefined for a dry run. */
  redrive?: Redrive;
  /** Dead letters the filter matches (at most 100,000 in one redrive). */
  matched: number;
  /** Up to 10 of them, newest failure first. */
  sample: DeadLetter[];
}

export interface ListFailuresOptions extends CallOptions {
  /** Groups ignore its groupId and taskIds, and take none as every group; dead letters need one. */
  filter?: FailureFilter;
  /** 1..1000; default 100. */
  pageSize?: number;
  /** A previous page's nextPageToken. */
  pageToken?: string;
}

export interface ListRedrivesOptions extends CallOptions {
  /** 1..1000; default 100. */
  pageSize?: number;
  /** A previous page's nextPageToken. */
  pageToken?: string;
}

export interface RedriveOptions extends CallOptions {
  /** Tasks a second: more than 0, at most 10,000. */
  rate: number;
  /** Count the matches and return a sample; change nothing. */
  dryRun?: boolean;
  /** Kept with the redrive (at most 1024 bytes). */
  note?: string;
}

export interface PurgeOptions extends CallOptions {
  /** Count what would be deleted; delete nothing. */
  dryRun?: boolean;
}

export interface Page<T> {
  items: T[];
  /** "" on the last page. */
  nextPageToken: string;
}

function date(ts: Timestamp | undefined): Date | undefined {
  return ts ? timestampDate(ts) : undefined;
}

export function toFailureFilter(filter: FailureFilter = {}): PbFailureFilter {
  const taskIds = [...(filter.taskIds ?? [])];
  if (taskIds.length > MAX_FILTER_TASK_IDS) {
    throw new TypeError(`filter.taskIds: at most ${MAX_FILTER_TASK_IDS} ids, got ${taskIds.length}`);
  }
  return create(FailureFilterSchema, {
    groupId: filter.groupId ?? "",
    queue: filter.queue ?? "",
    name: filter.name ?? "",
    failedAfter: filter.failedAfter === undefined ? undefined : timestampFromDate(filter.failedAfter),
    failedBefore: filter.failedBefore === undefined ? undefined : timestampFromDate(filter.failedBefore),
    labels: { ...filter.labels },
    taskIds,
    reason: filter.reason === undefined ? undefined : deadLetterReasonValue(filter.reason),
    all: filter.all ?? false,
  });
}

/** Only what is set, as a caller would have written it. */
function fromFailureFilter(f: PbFailureFilter | undefined): FailureFilter {
  const out: FailureFilter = {};
  if (!f) return out;
  if (f.groupId) out.groupId = f.groupId;
  if (f.queue) out.queue = f.queue;
  if (f.name) out.name = f.name;
  if (f.failedAfter) out.failedAfter = timestampDate(f.failedAfter);
  if (f.failedBefore) out.failedBefore = timestampDate(f.failedBefore);
  if (Object.keys(f.labels).length) out.labels = { ...f.labels };
  if (f.taskIds.length) out.taskIds = [...f.taskIds];
  if (f.reason) out.reason = deadLetterReasonName(f.reason);
  if (f.all) out.all = true;
  return out;
}

function toGroup(g: PbFailureGroup): FailureGroup {
  return {
    groupId: g.groupId,
    queue: g.queue,
    name: g.name,
    type: g.type,
    message: g.message,
    frame: g.frame,
    count: Number(g.count),
    firstSeen: date(g.firstSeen),
    lastSeen: date(g.lastSeen),
    sampleTaskIds: [...g.sampleTaskIds],
    sampleTraceback: g.sampleTraceback,
  };
}

function toDeadLetter(d: PbDeadLetter): DeadLetter {
  return {
    taskId: d.taskId,
    queue: d.queue,
    name: d.name,
    reason: deadLetterReasonName(d.reason),
    groupId: d.groupId,
    failure: d.failure ? toFailure(d.failure) : undefined,
    labels: { ...d.labels },
    redrives: d.redrives,
  };
}

function toRedrive(r: PbRedrive | undefined): Redrive {
  if (!r) throw new TypeError("the gateway answered without a redrive");
  return {
    id: r.id,
    filter: fromFailureFilter(r.filter),
    rate: r.rate,
    state: (PbRedriveState[r.state] as RedriveState | undefined) ?? "UNSPECIFIED",
    createdBy: r.createdBy,
    createdAt: date(r.createdAt),
    updatedAt: date(r.updatedAt),
    finishedAt: date(r.finishedAt),
    matched: Number(r.matched),
    requeued: Number(r.requeued),
    skipped: Number(r.skipped),
    note: r.note,
  };
}

function toItem(i: PbRedriveItem): RedriveItem {
  return {
    taskId: i.taskId,
    outcome: (PbRedriveOutcome[i.outcome] as RedriveOutcome | undefined) ?? "UNSPECIFIED",
    failedAttempt: i.failedAttempt,
    newAttempt: i.newAttempt,
    at: date(i.at),
    detail: i.detail,
  };
}

/** Every item of a listing, page after page as the loop asks for them. */
async function* pages<T>(first: string, fetch: (pageToken: string) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let pageToken = first;
  do {
    const page = await fetch(pageToken);
    yield* page.items;
    // A page pointing back at itself would loop for ever.
    if (page.nextPageToken && page.nextPageToken === pageToken) {
      throw new Error(`the gateway answered page token ${JSON.stringify(pageToken)} with itself`);
    }
    pageToken = page.nextPageToken;
  } while (pageToken);
}

/**
 * Dead letters (tasks whose failure is final), grouped by failure fingerprint; their redrive at
 * a bounded rate, with an audit; their purge: `client.failures`. Reads take a token with the
 * `read` scope; a redrive (a dry run too), its controls and a purge `admin`. Errors are
 * {@link TaskyardError}s, as for tasks.
 */
export class Failures {
  readonly #rpc: Client<typeof FailureService>;
  readonly #call: Caller;

  /** Made by the client; use `client.failures`. */
  constructor(rpc: Client<typeof FailureService>, call: Caller) {
    this.#rpc = rpc;
    this.#call = call;
  }

  /** One page of failure groups, most dead letters first. */
  async groups(options: ListFailuresOptions = {}): Promise<Page<FailureGroup>> {
    const filter = toFailureFilter(options.filter);
    const res = await this.#call(options, (call) =>
      this.#rpc.listFailureGroups({ filter, pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { items: res.groups.map(toGroup), nextPageToken: res.nextPageToken };
  }

  /** Every failure group the filter matches, page after page. */
  allGroups(options: Omit<ListFailuresOptions, "pageToken"> = {}): AsyncGenerator<FailureGroup, void, undefined> {
    return pages("", (pageToken) => this.groups({ ...options, pageToken }));
  }

  /** One page of the dead letters the filter matches (typically one group), newest failure first. */
  async list(options: ListFailuresOptions = {}): Promise<Page<DeadLetter>> {
    const filter = toFailureFilter(options.filter);
    const res = await this.#call(options, (call) =>
      this.#rpc.listFailures({ filter, pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { items: res.failures.map(toDeadLetter), nextPageToken: res.nextPageToken };
  }

  /** Every dead letter the filter matches, page after page. */
  all(options: Omit<ListFailuresOptions, "pageToken"> = {}): AsyncGenerator<DeadLetter, void, undefined> {
    return pages("", (pageToken) => this.list({ ...options, pageToken }));
  }

  /**
   * Re-queues the dead letters `filter` matches, each as a new attempt, at most `rate` a
   * second. The set is fixed when the call is accepted; the leading scheduler runs it, across
   * restarts. With `dryRun` it only counts them and returns a sample. A filter naming a task
   * that is not a dead letter is FAILED_PRECONDITION, and so is one that matches nothing.
   */
  async redrive(filter: FailureFilter, options: RedriveOptions): Promise<RedriveResult> {
    const rate = options.rate;
    if (typeof rate !== "number" || !(rate > 0 && rate <= MAX_REDRIVE_RATE)) {
      throw new TypeError(`rate must be more than 0 and at most ${MAX_REDRIVE_RATE} tasks a second, got ${String(rate)}`);
    }
    const wire = toFailureFilter(filter);
    const res = await this.#call(options, (call) =>
      this.#rpc.redrive({ filter: wire, rate, dryRun: options.dryRun ?? false, note: options.note ?? "" }, call),
    );
    return {
      redrive: res.redrive ? toRedrive(res.redrive) : undefined,
      matched: Number(res.matched),
      sample: res.sample.map(toDeadLetter),
    };
  }

  /** The redrive with this id, and its progress. */
  async getRedrive(id: string, options: CallOptions = {}): Promise<Redrive> {
    const res = await this.#call(options, (call) => this.#rpc.getRedrive({ id }, call));
    return toRedrive(res.redrive);
  }

  /** One page of redrives, newest first. */
  async listRedrives(options: ListRedrivesOptions = {}): Promise<Page<Redrive>> {
    const res = await this.#call(options, (call) =>
      this.#rpc.listRedrives({ pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { items: res.redrives.map(toRedrive), nextPageToken: res.nextPageToken };
  }

  /** Every redrive, newest first, page after page. */
  allRedrives(options: Omit<ListRedrivesOptions, "pageToken"> = {}): AsyncGenerator<Redrive, void, undefined> {
    return pages("", (pageToken) => this.listRedrives({ ...options, pageToken }));
  }

  /** One page of what became of each task the redrive matched: its audit. */
  async listRedriveItems(id: string, options: ListRedrivesOptions = {}): Promise<Page<RedriveItem>> {
    const res = await this.#call(options, (call) =>
      this.#rpc.listRedriveItems({ id, pageSize: options.pageSize ?? 0, pageToken: options.pageToken ?? "" }, call),
    );
    return { items: res.items.map(toItem), nextPageToken: res.nextPageToken };
  }

  /** Every item of the redrive, page after page. */
  allRedriveItems(
    id: string,
    options: Omit<ListRedrivesOptions, "pageToken"> = {},
  ): AsyncGenerator<RedriveItem, void, undefined> {
    return pages("", (pageToken) => this.listRedriveItems(id, { ...options, pageToken }));
  }

  /** Stops a RUNNING redrive where it is; otherwise FAILED_PRECONDITION. */
  async pauseRedrive(id: string, options: CallOptions = {}): Promise<Redrive> {
    const res = await this.#call(options, (call) => this.#rpc.pauseRedrive({ id }, call));
    return toRedrive(res.redrive);
  }

  /** Goes on with a PAUSED redrive; otherwise FAILED_PRECONDITION. */
  async resumeRedrive(id: string, options: CallOptions = {}): Promise<Redrive> {
    const res = await this.#call(options, (call) => this.#rpc.resumeRedrive({ id }, call));
    return toRedrive(res.redrive);
  }

  /** Ends a redrive: the tasks it has not re-queued stay dead letters. FAILED_PRECONDITION once DONE or CANCELLED. */
  async cancelRedrive(id: string, options: CallOptions = {}): Promise<Redrive> {
    const res = await this.#call(options, (call) => this.#rpc.cancelRedrive({ id }, call));
    return toRedrive(res.redrive);
  }

  /** Deletes the dead letters `filter` matches (with their logs) now; resolves to how many (would be, with `dryRun`). */
  async purge(filter: FailureFilter, options: PurgeOptions = {}): Promise<number> {
    const wire = toFailureFilter(filter);
    const res = await this.#call(options, (call) =>
      this.#rpc.purgeDeadLetters({ filter: wire, dryRun: options.dryRun ?? false }, call),
    );
    return Number(res.purged);
  }
}
