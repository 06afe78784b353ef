import { Result, Schema } from "effect";
import { readUtcTime } from "../accepted-times.ts";
import { CursorId, CursorTimestamp } from "../cursor-keys.ts";
import { InvalidInput } from "../errors.ts";
import { parseRecordId } from "../input.ts";
import type { Listing } from "../pagination.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./message.ts";

/**
 * The delivery log: an organization's deliveries (one message to one endpoint), newest first,
 * across its endpoints or of one, filtered by status, event type and time. Its order and cursor
 * key, and how a filter is read from a query string, so every reader of the log pages the same way.
 */

/** Where a delivery stands: waiting for (another) try, delivered, or out of tries. */
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** What the log shows: every field optional; `from` inclusive, `to` exclusive (ISO 8601 UTC with milliseconds). */
export interface DeliveryLogFilter {
  readonly status?: DeliveryStatus;
  readonly eventType?: WebhookEventType;
  readonly endpointId?: number;
  readonly from?: string;
  readonly to?: string;
}

/** Newest first: `created_at`, then `id`, descending. */
export const deliveryLogListing: Listing<{ readonly id: number; readonly created_at: string }, readonly [string, number]> = {
  endpoint: "deliveries",
  direction: "desc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (delivery) => [delivery.created_at, delivery.id],
};

/**
 * A time as the log's filter and the "since" of a replay take it: UTC, to the millisecond, within
 * `ACCEPTED_YEARS`; `undefined` when it is not one (`readUtcTime` says why).
 */
export const parseUtcTime = (text: string): string | undefined => {
  const time = readUtcTime(text, "time");
  return Result.isSuccess(time) ? time.success : undefined;
};

/** The query values a filter is read from (the first of a repeated one); empty means "any". */
export type FilterQuery = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>;

/** A filter's value `name` from a query string: the first of a repeated one, trimmed; "" for none. */
export const filterValue = (query: FilterQuery, name: string): string => {
  const value = query[name];
  return (typeof value === "string" ? value : value?.[0] ?? "").trim();
};

/**
 * A filter's `from` (inclusive) and `to` (exclusive) times (`readUtcTime`), each optional; a time
 * that is not one or out of `ACCEPTED_YEARS`, or a `to` not after `from`, is `InvalidInput` naming the field.
 */
export const parseUtcTimeRange = (query: FilterQuery): Result.Result<{ readonly from?: string; readonly to?: string }, InvalidInput> => {
  const from = filterValue(query, "from");
  const to = filterValue(query, "to");
  const fromTime = from === "" ? undefined : readUtcTime(from, "from");
  if (fromTime !== undefined && Result.isFailure(fromTime)) return Result.fail(fromTime.failure);
  const toTime = to === "" ? undefined : readUtcTime(to, "to");
  if (toTime !== undefined && Result.isFailure(toTime)) return Result.fail(toTime.failure);
  if (fromTime !== undefined && toTime !== undefined && toTime.success <= fromTime.success) {
    return Result.fail(new InvalidInput({ message: "to must be after from" }));
  }
  return Result.succeed({ ...(fromTime === undefined ? {} : { from: fromTime.success }), ...(toTime === undefined ? {} : { to: toTime.success }) });
};

/**
 * Reads the log's filter from a query string (`status`, `type`, `endpoint`, `from`, `to`); an
 * unknown value is `InvalidInput` naming the field, and a `to` not after `from` too.
 */
export const parseDeliveryLogFilter = (query: FilterQuery): Result.Result<DeliveryLogFilter, InvalidInput> => {
  const status = filterValue(query, "status");
  const eventType = filterValue(query, "type");
  const endpoint = filterValue(query, "endpoint");
  if (status !== "" && !(DELIVERY_STATUSES as ReadonlyArray<string>).includes(status)) {
    return Result.fail(new InvalidInput({ message: "status must be pending, succeeded or failed" }));
  }
  if (eventType !== "" && !(WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(eventType)) {
    return Result.fail(new InvalidInput({ message: "type must be one of the event types" }));
  }
  const endpointId = endpoint === "" ? undefined : parseRecordId(endpoint);
  if (endpoint !== "" && endpointId === undefined) return Result.fail(new InvalidInput({ message: "endpoint must be an endpoint id" }));
  const times = parseUtcTimeRange(query);
  if (Result.isFailure(times)) return times;
  return Result.succeed({
    ...(status === "" ? {} : { status: status as DeliveryStatus }),
    ...(eventType === "" ? {} : { eventType: eventType as WebhookEventType }),
    ...(endpointId === undefined ? {} : { endpointId }),
    ...times.success,
  });
};
