/**
 * Task arguments, keyword arguments and results are JSON. On the wire they are
 * google.protobuf.ListValue / Struct / Value; here they are plain JavaScript values.
 */
import { fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ListValueSchema, ValueSchema, type ListValue, type Value } from "@bufbuild/protobuf/wkt";

export type { JsonObject, JsonValue };

/**
 * Throws a TypeError naming the first value that JSON cannot carry as given (undefined,
 * NaN, Infinity, bigint, a Date or class instance, a cycle), rather than letting it be
 * dropped or altered on the way.
 */
export function checkJson(value: unknown, path: string, seen: Set<object> = new Set()): void {
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} is not a JSON number`);
      return;
    case "object": {
      if (value === null) return;
      if (seen.has(value)) throw new TypeError(`${path}: a cycle is not JSON`);
      seen.add(value);
      if (Array.isArray(value)) {
        value.forEach((item, i) => checkJson(item, `${path}[${i}]`, seen));
      } else {
        const proto: unknown = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          const kind = (value as object).constructor?.name ?? "object";
          throw new TypeError(`${path}: a ${kind} is not a JSON value (convert it first)`);
        }
        for (const [k, v] of Object.entries(value)) checkJson(v, `${path}.${k}`, seen);
      }
      seen.delete(value);
      return;
    }
    default:
      throw new TypeError(`${path}: ${typeof value} is not a JSON value`);
  }
}

export function toListValue(values: readonly JsonValue[], path: string): ListValue {
  checkJson(values, path);
  return fromJson(ListValueSchema, values as JsonValue[]);
}

export function toStruct(values: JsonObject, path: string): JsonObject {
  checkJson(values, path);
  return values;
}

export function fromListValue(list: ListValue | undefined): JsonValue[] {
  return list ? (toJson(ListValueSchema, list) as JsonValue[]) : [];
}

/** An unset result (a task not finished, or returning nothing) reads as null. */
export function fromValue(value: Value | undefined): JsonValue {
  return value ? toJson(ValueSchema, value) : null;
}

