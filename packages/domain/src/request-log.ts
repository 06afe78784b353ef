import { Result, Schema } from "effect";
import { CursorId, CursorTimestamp } from "./cursor-keys.ts";
import { InvalidInput } from "./errors.ts";
import { parseRecordId } from "./input.ts";
import type { Listing } from "./pagination.ts";
import { type FilterQuery, filterValue, parseUtcTimeRange } from "./webhooks/delivery-log.ts";

/**
 * The request log: an organization's own API requests as its developers look them up (method,
 * route, status, duration, key, request id, error text; never a body or a key), newest first,
 * filtered by key, status class, route, time or a request id from an SDK error. Every 4xx and 5xx
 * of an authenticated request is kept, and a sample of the successes.
 */

/** One request as the log keeps it. */
export interface RequestLogEntry {
  readonly id: number;
  readonly at: string;
  readonly method: string;
  /** The endpoint's pattern (`/v1/events/:id`), never the path with its ids. */
  readonly route: string;
  readonly status: number;
  readonly duration_ms: number;
  readonly api_key_id: number;
  readonly request_id: string;
  /** The error's text for a 4xx or 5xx (`{"error": …}`), null for a success. */
  readonly error: string | null;
}

/** A request as the API hands it to the log, with its organization (from the request's scope). */
export interface RequestLogRecord extends Omit<RequestLogEntry, "id" | "at"> {
  readonly organization_id: number;
  /** When the request arrived (ISO 8601 UTC). */
  readonly at: string;
}

/** Status classes the log filters by. */
export const STATUS_CLASSES = ["2xx", "4xx", "5xx"] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** The routes of v1, as the log names them: what the route filter offers. */
export const REQUEST_LOG_ROUTES = [
  "/v1/me", "/v1/events", "/v1/events/:id", "/v1/recipes", "/v1/recipes/:id", "/v1/clients", "/v1/invoices", "/v1/invoices/:id",
] as const;

/** Whether a request of `status` is kept: every 4xx and 5xx, and a `successSample` share (0 to 1) of the rest. */
export const keepsRequest = (status: number, successSample: number, draw: () => number = Math.random): boolean =>
  status >= 400 || (successSample > 0 && draw() < successSample);

/** What the log shows: every field optional; `from` inclusive, `to` exclusive (ISO 8601 UTC with milliseconds). */
export interface RequestLogFilter {
  readonly keyId?: number;
  readonly statusClass?: StatusClass;
  readonly route?: string;
  readonly requestId?: string;
  readonly from?: string;
  readonly to?: string;
}

/** Newest first: `at`, then `id`, descending. */
export const requestLogListing: Listing<{ readonly id: number; readonly at: string }, readonly [string, number]> = {
  endpoint: "requests",
  direction: "desc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (entry) => [entry.at, entry.id],
};

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Reads the log's filter from a query string (`key`, `status`, `route`, `request`, `from`, `to`);
 * an unknown value is `InvalidInput` naming the field, and a `to` not after `from` too.
 */
export const parseRequestLogFilter = (query: FilterQuery): Result.Result<RequestLogFilter, InvalidInput> => {
  const key = filterValue(query, "key");
  const status = filterValue(query, "status");
  const route = filterValue(query, "route");
  const requestId = filterValue(query, "request");
  const keyId = key === "" ? undefined : parseRecordId(key);
  if (key !== "" && keyId === undefined) return Result.fail(new InvalidInput({ message: "key must be a key id" }));
  if (status !== "" && !(STATUS_CLASSES as ReadonlyArray<string>).includes(status)) {
    return Result.fail(new InvalidInput({ message: "status must be 2xx, 4xx or 5xx" }));
  }
  if (route !== "" && !(REQUEST_LOG_ROUTES as ReadonlyArray<string>).includes(route)) {
    return Result.fail(new InvalidInput({ message: "route must be one of the API's routes" }));
  }
  if (requestId !== "" && !SAFE_REQUEST_ID.test(requestId)) {
    return Result.fail(new InvalidInput({ message: "request must be a request id (letters, digits, _ . : -)" }));
  }
  const times = parseUtcTimeRange(query);
  if (Result.isFailure(times)) return times;
  return Result.succeed({
    ...(keyId === undefined ? {} : { keyId }),
    ...(status === "" ? {} : { statusClass: status as StatusClass }),
    ...(route === "" ? {} : { route }),
    ...(requestId === "" ? {} : { requestId }),
    ...times.success,
  });
};
