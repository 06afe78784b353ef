import { Result, Schema } from "effect";
import { readUtcTime } from "../accepted-times.ts";
import { CursorId, CursorTimestamp } from "../cursor-keys.ts";
import type { InvalidInput } from "../errors.ts";
import type { Listing } from "../pagination.ts";
import { parseEventTypes } from "./delivery.ts";
import { type FilterQuery, filterValue } from "./delivery-log.ts";
import type { WebhookEventType } from "./message.ts";

/**
 * The message feed: an organization's webhook messages as an integrator pulls them with an API key
 * (`GET /cli/messages`, the SDK's `messages.list`, `platter messages tail`), oldest first, each with
 * its envelope exactly as a receiver gets it, so a receiver that cannot take POSTs, or was down past
 * the retry schedule, reads what it missed from its last cursor.
 */

/** What the feed is filtered by: event types (empty: every type) and a first time (inclusive, ISO 8601 UTC with milliseconds). */
export interface MessageFeedFilter {
  readonly eventTypes: ReadonlyArray<WebhookEventType>;
  readonly since?: string;
}

/** One message of the feed: its envelope's id, type and time, `body` the envelope's exact bytes (null when this code cannot read its payload), and the cursor to resume after it. */
export interface FeedMessage {
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly body: string | null;
  readonly cursor: string;
}

/** A stored message as the feed reads it, before its cursor is made. */
export interface FeedRow {
  readonly position: number;
  readonly id: string;
  readonly type: string;
  readonly created_at: string;
  readonly body: string | null;
}

/** Oldest first, in order of creation: `created_at`, then the message's id. */
export const messageFeedListing: Listing<FeedRow, readonly [string, number]> = {
  endpoint: "messages",
  direction: "asc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (row) => [row.created_at, row.position],
};

/**
 * Reads the feed's filter from a query string: `type` (event types, comma separated) and `since` (a
 * UTC time, `readUtcTime`); an unknown type or a time that is not one is `InvalidInput` naming the field.
 */
export const parseMessageFeedFilter = (query: FilterQuery): Result.Result<MessageFeedFilter, InvalidInput> => {
  const types = parseEventTypes(filterValue(query, "type"));
  if (Result.isFailure(types)) return Result.fail(types.failure);
  const since = filterValue(query, "since");
  const sinceTime = since === "" ? undefined : readUtcTime(since, "since");
  if (sinceTime !== undefined && Result.isFailure(sinceTime)) return Result.fail(sinceTime.failure);
  return Result.succeed({ eventTypes: types.success, ...(sinceTime === undefined ? {} : { since: sinceTime.success }) });
};
