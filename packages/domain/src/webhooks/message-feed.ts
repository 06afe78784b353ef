import { Result, Schema } from "effect";
import { readUtcTime } from "../accepted-times.ts";
import { CursorId, CursorTimestamp } from "../cursor-keys.ts";
import type { InvalidCursor, InvalidInput } from "../errors.ts";
import { type Listing, type PageRequest, parsePageRequest } from "../pagination.ts";
import { parseEventTypes } from "./delivery.ts";
import { type FilterQuery, filterValue } from "./delivery-log.ts";
import type { WebhookEventType } from "./message.ts";

/**
 * The message feed: an organization's webhook messages as an integrator pulls them with an API key
 * (`GET /cli/messages`, the SDK's `messages.list`, `platter messages tail`), oldest first, each with
 * its envelope exactly as a receiver gets it, so a receiver that cannot take POSTs, or was down past
 * the retry schedule, reads what it missed from its last cursor.
 */

/** What the feed is filtered by: event types (empty: every type). */
export interface MessageFeedFilter {
  readonly eventTypes: ReadonlyArray<WebhookEventType>;
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

/** One request of the feed: its filter and its page (from a cursor, from `since`, or from the oldest message kept). */
export interface MessageFeedRequest {
  readonly filter: MessageFeedFilter;
  readonly page: PageRequest<readonly [string, number]>;
}

/**
 * Reads a feed request from a query string: `type` (event types, comma separated), `limit`, and
 * where to start: `cursor` (a message's, to resume after it) or else `since` (a UTC time,
 * `readUtcTime`: the first message made at or after it), else the oldest message retention kept.
 * `since` starts the walk as a cursor would (just before `since`'s first message), so every page
 * is the same index range. An unknown type or a time that is not one is `InvalidInput` naming the
 * field; a bad cursor `InvalidCursor`.
 */
export const parseMessageFeedRequest = (query: FilterQuery): Result.Result<MessageFeedRequest, InvalidInput | InvalidCursor> => {
  const types = parseEventTypes(filterValue(query, "type"));
  if (Result.isFailure(types)) return Result.fail(types.failure);
  const since = filterValue(query, "since");
  const sinceTime = since === "" ? undefined : readUtcTime(since, "since");
  if (sinceTime !== undefined && Result.isFailure(sinceTime)) return Result.fail(sinceTime.failure);
  const page = parsePageRequest(messageFeedListing, query);
  if (Result.isFailure(page)) return Result.fail(page.failure);
  const start = page.success.after === undefined && sinceTime !== undefined
    // No message id is 0: the first key after (since, 0) is since's first message.
    ? { ...page.success, after: [sinceTime.success, 0] as const }
    : page.success;
  return Result.succeed({ filter: { eventTypes: types.success }, page: start });
};
