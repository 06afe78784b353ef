import { Result, type Schema } from "effect";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import type { InvalidCursor } from "./errors.ts";

/** Pagination: limit rules, cursor-bound listings and keyset page assembly. */

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 500;
const WHOLE_NUMBER = /^-?\d+$/;

/** A sort key: the values of the ordering columns of one row, most significant first. */
export type SortKey = ReadonlyArray<string | number>;

/** How one endpoint lists a resource: its cursor namespace, order and key. */
export interface Listing<Row, Key extends SortKey> {
  /** Binds cursors to the endpoint: a cursor from another listing is refused. */
  readonly endpoint: string;
  /** `asc`: smallest key first; `desc`: largest key first (newest first). */
  readonly direction: "asc" | "desc";
  readonly cursorKey: Schema.Codec<Key, unknown>;
  readonly keyOf: (row: Row) => Key;
}

/** One page's worth of query: how many rows, and the key of the last row already seen. */
export interface PageRequest<Key extends SortKey> {
  readonly limit: number;
  readonly after: Key | undefined;
}

/** The list envelope of every list endpoint. */
export interface ListPage<Row> {
  readonly data: ReadonlyArray<Row>;
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

/**
 * The spec's limit rules: 100 when absent, zero, negative or not a whole number; capped at 500.
 * A repeated `limit` parameter uses its first value.
 */
export const parseLimit = (raw: string | ReadonlyArray<string> | undefined): number => {
  const text = typeof raw === "string" ? raw : raw?.[0];
  if (text === undefined || !WHOLE_NUMBER.test(text)) return DEFAULT_LIMIT;
  const value = Number(text);
  if (value <= 0) return DEFAULT_LIMIT;
  return Math.min(value, MAX_LIMIT);
};

/** Reads `limit` and `cursor` query values into a page request for `listing`. */
export const parsePageRequest = <Row, Key extends SortKey>(
  listing: Listing<Row, Key>,
  query: { readonly limit?: string | ReadonlyArray<string>; readonly cursor?: string | ReadonlyArray<string> },
): Result.Result<PageRequest<Key>, InvalidCursor> => {
  const limit = parseLimit(query.limit);
  const cursor = typeof query.cursor === "string" ? query.cursor : query.cursor?.[0];
  if (cursor === undefined) return Result.succeed({ limit, after: undefined });
  return Result.map(decodeCursor(listing.endpoint, cursor, listing.cursorKey), (after) => ({ limit, after }));
};

/**
 * Builds the envelope from rows fetched with `limit + 1`: the extra row only tells that more exist.
 * The next cursor is anchored on the last row returned, never on an offset.
 */
export const assemblePage = <Row, Key extends SortKey>(
  listing: Listing<Row, Key>,
  rows: ReadonlyArray<Row>,
  limit: number,
): ListPage<Row> => {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  const last = data[data.length - 1];
  return {
    data,
    has_more: hasMore,
    next_cursor: hasMore && last !== undefined ? encodeCursor(listing.endpoint, listing.keyOf(last)) : null,
  };
};
