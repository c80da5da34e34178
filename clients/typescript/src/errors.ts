/** The client's one error type: a gRPC status with its google.rpc.Status details decoded. */
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";

/** gRPC's own spelling of each status code, the one every Taskyard client and doc uses. */
const CODE_NAMES = [
  "OK",
  "CANCELLED",
  "UNKNOWN",
  "INVALID_ARGUMENT",
  "DEADLINE_EXCEEDED",
  "NOT_FOUND",
  "ALREADY_EXISTS",
  "PERMISSION_DENIED",
  "RESOURCE_EXHAUSTED",
  "FAILED_PRECONDITION",
  "ABORTED",
  "OUT_OF_RANGE",
  "UNIMPLEMENTED",
  "INTERNAL",
  "UNAVAILABLE",
  "DATA_LOSS",
  "UNAUTHENTICATED",
] as const;

export type StatusCodeName = (typeof CODE_NAMES)[number];

/** One bad field of an INVALID_ARGUMENT (google.rpc.BadRequest), e.g. `tasks[1].name`. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
  readonly reason: string;
}

export interface TaskyardErrorInit {
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  violations?: readonly FieldViolation[];
  cause?: unknown;
}

/**
 * A failed call. `code` is the gRPC status name ("NOT_FOUND"), `grpcCode` its number;
 * `reason`, `domain` and `metadata` come from the ErrorInfo detail and `violations` from
 * BadRequest. A refusal by gRPC itself (message too large, no gateway, client deadline)
 * carries no details: `reason` is "" and `violations` empty.
 */
export class TaskyardError extends Error {
  override readonly name = "TaskyardError";
  readonly code: StatusCodeName;
  /** The numeric gRPC status code (the same numbers as Connect's `Code`). */
  readonly grpcCode: number;
  /** The status message alone, without the code prefix of `message`. */
  readonly rawMessage: string;
  readonly reason: string;
  readonly domain: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly violations: readonly FieldViolation[];

  constructor(grpcCode: number, rawMessage: string, init: TaskyardErrorInit = {}) {
    const code = CODE_NAMES[grpcCode] ?? "UNKNOWN";
    const reason = init.reason ?? "";
    super(`${code}: ${rawMessage}${reason ? ` [${reason}]` : ""}`, { cause: init.cause });
    this.code = code;
    this.grpcCode = CODE_NAMES[grpcCode] ? grpcCode : Code.Unknown;
    this.rawMessage = rawMessage;
    this.reason = reason;
    this.domain = init.domain ?? "";
    this.metadata = Object.freeze({ ...init.metadata });
    this.violations = Object.freeze([...(init.violations ?? [])]);
  }

  /** Wraps anything a call threw; a TaskyardError passes through unchanged. */
  static from(err: unknown): TaskyardError {
    if (err instanceof TaskyardError) return err;
    const ce = ConnectError.from(err);
    const info = ce.findDetails(ErrorInfoSchema)[0];
    const violations = ce
      .findDetails(BadRequestSchema)
      .flatMap((b) => b.fieldViolations)
      .map((v) => ({ field: v.field, description: v.description, reason: v.reason }));
    return new TaskyardError(ce.code, ce.rawMessage, {
      reason: info?.reason,
      domain: info?.domain,
      metadata: info?.metadata,
      violations,
      cause: err,
    });
  }
}
