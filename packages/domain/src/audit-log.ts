import { Result, Schema } from "effect";
import { nextDayStart, readUtcDay } from "./accepted-times.ts";
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

/**
 * Reads the audit log's filter from a query string: `action` (an action's shape; whether the log
 * holds it is the reader's check), `actor` (`session`, `operator` or `api_key`), `from` and `to` (days,
 * `YYYY-MM-DD`, UTC, both included, within `ACCEPTED_YEARS`). A bad value is `InvalidInput` naming the field.
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
  const fromDay = from === "" ? undefined : readUtcDay(from, "from");
  if (fromDay !== undefined && Result.isFailure(fromDay)) return Result.fail(fromDay.failure);
  const toDay = to === "" ? undefined : readUtcDay(to, "to");
  if (toDay !== undefined && Result.isFailure(toDay)) return Result.fail(toDay.failure);
  const fromTime = fromDay?.success;
  if (fromTime !== undefined && toDay !== undefined && toDay.success < fromTime) return Result.fail(new InvalidInput({ message: "to must not be before from" }));
  return Result.succeed({
    ...(action === "" ? {} : { action }),
    ...(actor === "" ? {} : { actor: actor as AuditActorKind }),
    ...(fromTime === undefined ? {} : { from: fromTime }),
    // The whole of the `to` day: up to the next day's start.
    ...(toDay === undefined ? {} : { to: nextDayStart(toDay.success) }),
  });
};

/** Most bytes an audit entry's details may take as JSON text (the column's check holds the same bound). */
export const AUDIT_DETAILS_MAX_BYTES = 32_768;

/** What an audit entry's details hold: the fields a change changed, as they were before and after it. */
export interface AuditDetails {
  readonly before: Readonly<Record<string, unknown>>;
  readonly after: Readonly<Record<string, unknown>>;
}
