import { Result, Schema } from "effect";
import { CursorId, CursorTimestamp } from "./cursor-keys.ts";
import { InvalidInput } from "./errors.ts";
import type { Listing } from "./pagination.ts";
import { type FilterQuery, filterValue } from "./webhooks/delivery-log.ts";

/**
 * An organization's audit log as its readers page through it: newest first, filtered by action,
 * by the kind of actor (a Developer-area session or the operator) and by days (UTC). Its order and
 * cursor key, and how a filter is read from a query string.
 */

/** Who may have made a change: a Developer-area session, the operator (the CLI), or an API key (`platter listen`, `platter trigger`). */
export const AUDIT_ACTOR_KINDS = ["session", "operator", "api_key"] as const;
/** The kind of an audit entry's actor. */
export type AuditActorKind = (typeof AUDIT_ACTOR_KINDS)[number];

/** What the audit log shows: every field optional; `from` inclusive, `to` exclusive (ISO 8601 UTC with milliseconds). */
export interface AuditLogFilter {
  readonly action?: string;
  readonly actor?: AuditActorKind;
  readonly from?: string;
  readonly to?: string;
}

/** Newest first: `at`, then `id`, descending. */
export const auditLogListing: Listing<{ readonly id: number; readonly at: string }, readonly [string, number]> = {
  endpoint: "audit-log",
  direction: "desc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (entry) => [entry.at, entry.id],
};

/** An action's shape as the application services write them: `api_key.created`, `webhook_endpoint.secret_rotated`. */
const ACTION = /^[a-z_]{1,50}\.[a-z_]{1,50}$/;

/** A day as a `date` field sends it. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

const DAY_MS = 86_400_000;

/** The start of day `text` (UTC) as ISO, or `undefined` when it is not a day that exists. */
const dayStart = (text: string): string | undefined => {
  if (!DAY.test(text)) return undefined;
  const iso = `${text}T00:00:00.000Z`;
  const time = Date.parse(iso);
  // The round trip refuses days that do not exist (Feb 30), which Date.parse would roll over.
  return Number.isNaN(time) || new Date(time).toISOString() !== iso ? undefined : iso;
};

/**
 * Reads the audit log's filter from a query string: `action` (an action's shape; whether the log
 * holds it is the reader's check), `actor` (`session`, `operator` or `api_key`), `from` and `to` (days,
 * `YYYY-MM-DD`, UTC, both included). A bad value is `InvalidInput` naming the field.
 */
export const parseAuditLogFilter = (query: FilterQuery): Result.Result<AuditLogFilter, InvalidInput> => {
  const action = filterValue(query, "action");
  const actor = filterValue(query, "actor");
  const from = filterValue(query, "from");
  const to = filterValue(query, "to");
  if (action !== "" && !ACTION.test(action)) return Result.fail(new InvalidInput({ message: "action must be one of the actions in the log" }));
  if (actor !== "" && !(AUDIT_ACTOR_KINDS as ReadonlyArray<string>).includes(actor)) {
    return Result.fail(new InvalidInput({ message: "actor must be session, operator or api_key" }));
  }
  const fromTime = from === "" ? undefined : dayStart(from);
  if (from !== "" && fromTime === undefined) return Result.fail(new InvalidInput({ message: "from must be a date written YYYY-MM-DD" }));
  const toDay = to === "" ? undefined : dayStart(to);
  if (to !== "" && toDay === undefined) return Result.fail(new InvalidInput({ message: "to must be a date written YYYY-MM-DD" }));
  if (fromTime !== undefined && toDay !== undefined && toDay < fromTime) return Result.fail(new InvalidInput({ message: "to must not be before from" }));
  return Result.succeed({
    ...(action === "" ? {} : { action }),
    ...(actor === "" ? {} : { actor: actor as AuditActorKind }),
    ...(fromTime === undefined ? {} : { from: fromTime }),
    // The whole of the `to` day: up to the next day's start.
    ...(toDay === undefined ? {} : { to: new Date(Date.parse(toDay) + DAY_MS).toISOString() }),
  });
};
