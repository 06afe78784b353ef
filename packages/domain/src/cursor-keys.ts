import { Schema } from "effect";

/**
 * Cursor keys: the value types a sort key may hold. They are checked as strictly as request
 * input, because a cursor is input too: a well-formed cursor must never reach the database with a
 * value it would reject.
 */

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A row's `created_at`, as the API prints it (UTC, milliseconds). */
export const CursorTimestamp = Schema.String.check(
  // The round trip refuses days that do not exist (Feb 30), which Date.parse would roll over.
  Schema.makeFilter((s: string) => {
    const time = Date.parse(s);
    return ISO_MILLIS.test(s) && s >= "0001" && !Number.isNaN(time) && new Date(time).toISOString() === s;
  }),
);

/** A record id. */
export const CursorId = Schema.Int.check(
  Schema.isBetween({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
);

/** A name column value (no NUL: PostgreSQL text cannot hold it). */
export const CursorName = Schema.String.check(Schema.makeFilter((s: string) => !s.includes("\u0000")));
