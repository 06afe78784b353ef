import {
  type DeliveryLogFilter, deliveryLogListing, type DeliveryStatus, InvalidTransition, type ListPage, NotFound, type OrgScope, type PageRequest,
  type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { madeBeforeById, rowTimeById } from "../history-partitions.ts";
import { isoTimestamp, readFirstRows, readKeysetPage } from "../keyset-page.ts";
import { allOf, type Join, orgSql, raw, type Statement, sql } from "../org-sql.ts";
import { CLEAR_LEASE } from "../webhooks/lease.ts";
import { madeBeforeByEnvelopeId } from "./webhook-message.ts";

/** An organization's deliveries as operators and developers inspect them, with every attempt; and sending them again. */

export { DELIVERY_STATUSES, type DeliveryStatus } from "@platter/domain";

export interface DeliveryFilter {
  readonly status?: DeliveryStatus;
  readonly endpointId?: number;
  readonly limit?: number;
}

/** One attempt of a delivery: what the receiver answered (its body as stored, capped by the dispatcher), or the error. */
export interface AttemptView {
  readonly attempt: number;
  readonly started_at: string;
  readonly duration_ms: number;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly response_body: string | null;
  readonly next_attempt_at: string | null;
}

export interface DeliveryView {
  readonly id: number;
  readonly endpoint_id: number;
  readonly envelope_id: string;
  readonly event_type: string;
  readonly status: DeliveryStatus;
  readonly attempts: Array<AttemptView>;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
  /** Whether a replay (`retry`) would change it now: finished, or pending and waiting for a later try. */
  readonly replayable: boolean;
}

/** One row of the delivery log: a message sent to one endpoint, with how its last attempt went. */
export interface DeliveryLogEntry {
  readonly id: number;
  readonly message_id: number;
  readonly envelope_id: string;
  readonly event_type: string;
  readonly endpoint_id: number;
  readonly endpoint_url: string;
  /** Whether its endpoint was deleted (the log shows it as a deleted endpoint until retention removes the delivery). */
  readonly endpoint_deleted: boolean;
  readonly status: DeliveryStatus;
  /** Tries made so far. */
  readonly attempts: number;
  readonly last_status_code: number | null;
  readonly last_error: string | null;
  readonly last_attempt_at: string | null;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
  /** Why it ended without its attempts deciding it (`SETTLED_ENDPOINT_DISABLED`), or null. */
  readonly settled_reason: string | null;
}

/** A message with its deliveries, each with every attempt. */
export interface MessageView {
  readonly id: number;
  readonly envelope_id: string;
  readonly event_type: string;
  readonly created_at: string;
  /** The stored, versioned payload (render it with the domain's `envelopeBody`). */
  readonly payload: unknown;
  /** Each delivery with its endpoint's URL, and whether that endpoint was deleted. */
  readonly deliveries: ReadonlyArray<DeliveryView & { readonly endpoint_url: string; readonly endpoint_deleted: boolean }>;
}

/**
 * Delivery `d`'s message `m`: its envelope id, type, payload and time. Read in its own partition (a delivery has its
 * message's `created_at`), by a lateral with a limit, which the planner never flattens: joined as a table, it hashed the
 * organization's every message (in every partition) to find one delivery's.
 */
export const MESSAGE_OF_DELIVERY: Join = {
  to: {
    select: {
      columns: "m.envelope_id, m.type, m.payload, m.created_at", from: "webhook_messages", as: "m",
      where: raw("m.id = d.message_id and m.created_at = d.created_at"), rest: raw("limit 1"),
    },
    lateral: true,
  },
  as: "m",
  on: "true",
};
/** Delivery `d`'s endpoint `w`. */
/** Why a delivery of a deleted endpoint is not sent again. */
const DELETED_ENDPOINT_REPLAY = "Its endpoint was deleted: nothing is sent to it again. Its history stays readable until retention.";
const ENDPOINT_OF_DELIVERY: Join = { to: { table: "webhook_endpoints" }, as: "w", on: "w.id = d.endpoint_id" };
/**
 * Delivery `d`'s attempts, oldest first, as `AttemptView`s in the column `attempts.list`: they come
 * with their delivery, in one round trip.
 */
export const ATTEMPTS_OF_DELIVERY: Join = {
  to: {
    select: {
      columns: `coalesce(json_agg(json_build_object('attempt', a.attempt,
        'started_at', ${isoTimestamp("a.started_at")}, 'duration_ms', a.duration_ms,
        'status_code', a.status_code, 'error', a.error, 'response_body', a.response_body,
        'next_attempt_at', ${isoTimestamp("a.next_attempt_at")}) order by a.id), '[]') as list`,
      from: "webhook_attempts",
      as: "a",
      where: raw("a.delivery_id = d.id and a.delivery_created_at = d.created_at"),
    },
    lateral: true,
  },
  as: "attempts",
  on: "true",
};

/**
 * The delivery's endpoint (its own, by id: the same organization's) is enabled. A disabled endpoint's
 * deliveries are not replayed: pending, they would wait for ever and keep their messages from retention.
 */
const ENDPOINT_ENABLED = "exists (select 1 from webhook_endpoints e where e.id = d.endpoint_id and e.enabled)";

/**
 * The deliveries "send now" changes: finished ones, and pending ones whose next try is later. One
 * already due (or being sent) is left alone, so a retry never changes nothing and calls it a change.
 */
const RETRIABLE = `((d.status <> 'pending' or d.next_attempt_at > now()) and ${ENDPOINT_ENABLED})`;

const COLUMNS = `d.id, d.endpoint_id, m.envelope_id, m.type as event_type, d.status, ${RETRIABLE} as replayable,
  case when d.status = 'pending' then ${isoTimestamp("d.next_attempt_at")} end as next_attempt_at,
  ${isoTimestamp("d.created_at")} as created_at, attempts.list as attempts`;

/**
 * Due now, with the same envelope and bytes; attempts made so far are kept. For a pending delivery
 * (`RETRIABLE`: waiting for its next try, so not held by a dispatcher) only the time changes.
 */
const DUE_AGAIN = sql`status = 'pending', next_attempt_at = now(), completed_at = null, ${raw(CLEAR_LEASE)}, settled_reason = null`;

/** Failing deliveries: failed ones, and pending ones waiting to try again after a failed attempt. */
const FAILING = "(d.status = 'failed' or (d.status = 'pending' and d.attempts > 0 and d.next_attempt_at > now()))";

/**
 * Deliveries a bulk replay (`retryFailed`) reads and changes per statement, each statement its
 * own short transaction: an endpoint with a month of failures is never one long statement holding
 * its rows locked, nor one unbounded transaction.
 */
export const REPLAY_BATCH_SIZE = 500;

/** The log's columns: the delivery, its message's envelope id and type, its endpoint's URL, and its last attempt. */
const LOG_COLUMNS = `d.id, d.message_id, m.envelope_id, m.type as event_type, d.endpoint_id, w.url as endpoint_url, w.deleted_at is not null as endpoint_deleted, d.status, d.attempts,
  last.status_code as last_status_code, last.error as last_error, ${isoTimestamp("last.started_at")} as last_attempt_at,
  case when d.status = 'pending' then ${isoTimestamp("d.next_attempt_at")} end as next_attempt_at,
  ${isoTimestamp("d.created_at")} as created_at, d.settled_reason`;
const LOG_JOINS: ReadonlyArray<Join> = [
  MESSAGE_OF_DELIVERY,
  ENDPOINT_OF_DELIVERY,
  {
    to: {
      select: { columns: "a.status_code, a.error, a.started_at", from: "webhook_attempts", as: "a", where: raw("a.delivery_id = d.id and a.delivery_created_at = d.created_at"), rest: raw("order by a.id desc limit 1") },
      lateral: true,
    },
    as: "last",
    on: "true",
    left: true,
  },
];

type LogRow = Omit<DeliveryLogEntry, "id" | "message_id" | "endpoint_id"> & { id: string; message_id: string; endpoint_id: string };

/**
 * The log's filter. With the time range and the cursor's key (`readKeysetPage`) each page reads one
 * index range: the organization's `(organization_id, created_at, id)`, or with an endpoint its
 * `(endpoint_id, created_at, id)` (its failed ones: the partial index of failed deliveries).
 */
const logFilter = (filter: DeliveryLogFilter): ReadonlyArray<Statement> => [
  ...(filter.endpointId === undefined ? [] : [sql`d.endpoint_id = ${filter.endpointId}`]),
  ...(filter.status === undefined ? [] : [sql`d.status = ${filter.status}`]),
  ...(filter.eventType === undefined ? [] : [sql`m.type = ${filter.eventType}`]),
];

/** The CLI's filter, within the organization's `(organization_id, created_at, id)` range. */
const listFilter = (filter: DeliveryFilter): ReadonlyArray<Statement> => [
  ...(filter.status === undefined ? [] : [sql`d.status = ${filter.status}`]),
  ...(filter.endpointId === undefined ? [] : [sql`d.endpoint_id = ${filter.endpointId}`]),
];

/** Deliveries in the log's order (`deliveryLogListing`): `created_at`, then `id`, newest first. */
const DELIVERY_KEY = { keyColumns: ["d.created_at", "d.id"], keyCasts: ["timestamptz", "bigint"] } as const;

const toDeliveryView = <Row extends { id: string; endpoint_id: string }>(row: Row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) });

export class DeliveryRepository extends Context.Service<
  DeliveryRepository,
  {
    /** Newest first. */
    readonly list: (scope: OrgScope, filter: DeliveryFilter) => Effect.Effect<ReadonlyArray<DeliveryView>, DatabaseUnavailable>;
    /** One delivery with its attempts; `NotFound` for another organization's. */
    readonly find: (scope: OrgScope, id: number) => Effect.Effect<DeliveryView, NotFound | DatabaseUnavailable>;
    /** One page of the delivery log (`deliveryLogListing`: newest first), filtered. */
    readonly log: (
      scope: OrgScope,
      filter: DeliveryLogFilter,
      page: PageRequest<readonly [string, number]>,
    ) => Effect.Effect<ListPage<DeliveryLogEntry>, DatabaseUnavailable>;
    /** A message by its envelope id (`evt_…`), with its deliveries and their attempts; `NotFound` when it is not the scope's. */
    readonly message: (scope: OrgScope, envelopeId: string) => Effect.Effect<MessageView, NotFound | DatabaseUnavailable>;
    /**
     * Sends a delivery now (see `RETRIABLE`): a finished one is due again, a pending one waiting for
     * its next try has it now. `retried` is 0 when it is already due or being sent, or its endpoint is
     * disabled (nothing changes); `InvalidTransition` when its endpoint was deleted (nothing is sent
     * to it again); `NotFound` when it is not the scope's.
     */
    readonly retry: (scope: OrgScope, id: number) => Effect.Effect<{ readonly retried: number }, NotFound | InvalidTransition | DatabaseUnavailable>;
    /** `retry` for every delivery of a message; `NotFound` without the message. */
    readonly retryMessage: (scope: OrgScope, messageId: number) => Effect.Effect<{ readonly retried: number }, NotFound | DatabaseUnavailable>;
    /**
     * `retry` for every failing delivery of an endpoint (made at or after `since`, when given):
     * failed ones, and pending ones waiting to try again after a failed attempt; in batches of
     * `REPLAY_BATCH_SIZE`, each its own statement and transaction.
     */
    readonly retryFailed: (scope: OrgScope, endpointId: number, since?: string) => Effect.Effect<{ readonly retried: number }, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/DeliveryRepository") {
  static readonly layer = Layer.effect(
    DeliveryRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return DeliveryRepository.of({
        list: (scope: OrgScope, filter: DeliveryFilter) =>
          readFirstRows(
            orgSql(database, scope),
            deliveryLogListing,
            { columns: COLUMNS, from: "webhook_deliveries", as: "d", joins: [MESSAGE_OF_DELIVERY, ATTEMPTS_OF_DELIVERY], ...DELIVERY_KEY, filter: listFilter(filter) },
            filter.limit ?? 100,
            (row: DeliveryView & { id: string; endpoint_id: string }) => toDeliveryView(row),
          ),
        find: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const row = yield* orgSql(database, scope).one<DeliveryView & { id: string; endpoint_id: string }>({
            columns: COLUMNS,
            from: "webhook_deliveries",
            as: "d",
            joins: [MESSAGE_OF_DELIVERY, ATTEMPTS_OF_DELIVERY],
            // Newest first from the latest time it may have: about one partition read (`madeBeforeById`).
            where: sql`d.id = ${id} and d.created_at < ${madeBeforeById("webhook_deliveries", id)}`,
            rest: raw("order by d.created_at desc limit 1"),
          });
          return toDeliveryView(row);
        }),
        log: (scope: OrgScope, filter: DeliveryLogFilter, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            deliveryLogListing,
            {
              columns: LOG_COLUMNS, from: "webhook_deliveries", as: "d", joins: LOG_JOINS, ...DELIVERY_KEY,
              filter: logFilter(filter), range: { from: filter.from, to: filter.to },
            },
            page,
            (row: LogRow): DeliveryLogEntry => ({ ...row, id: Number(row.id), message_id: Number(row.message_id), endpoint_id: Number(row.endpoint_id) }),
          ),
        message: Effect.fnUntraced(function* (scope: OrgScope, envelopeId: string) {
          const org = orgSql(database, scope);
          const message = yield* org.one<{ id: string; envelope_id: string; event_type: string; created_at: string; payload: unknown }>({
            columns: `m.id, m.envelope_id, m.type as event_type, ${isoTimestamp("m.created_at")} as created_at, m.payload`,
            from: "webhook_messages",
            as: "m",
            where: sql`m.envelope_id = ${envelopeId} and m.created_at <= ${madeBeforeByEnvelopeId(envelopeId)}`,
            // Newest first from the latest time it may have: the partition of its id's time, about one read.
            rest: raw("order by m.created_at desc limit 1"),
          });
          const deliveries = yield* org.select<DeliveryView & { id: string; endpoint_id: string; endpoint_url: string; endpoint_deleted: boolean }>({
            columns: `${COLUMNS}, w.url as endpoint_url, w.deleted_at is not null as endpoint_deleted`,
            from: "webhook_deliveries",
            as: "d",
            joins: [MESSAGE_OF_DELIVERY, ENDPOINT_OF_DELIVERY, ATTEMPTS_OF_DELIVERY],
            where: sql`d.message_id = ${message.id}::bigint and d.created_at = ${message.created_at}::timestamptz`,
            rest: raw("order by d.endpoint_id"),
          });
          return { ...message, id: Number(message.id), deliveries: deliveries.map(toDeliveryView) };
        }),
        retry: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const org = orgSql(database, scope);
          const rows = yield* org.update({
            table: "webhook_deliveries",
            as: "d",
            set: DUE_AGAIN,
            where: sql`d.id = ${id} and d.created_at = ${rowTimeById("webhook_deliveries", scope.organizationId, id)} and ${raw(RETRIABLE)}`,
            returning: "d.id",
          });
          if (rows.length === 0) {
            const unchanged = yield* org.one<{ endpoint_deleted: boolean }>({
              columns: "w.deleted_at is not null as endpoint_deleted", from: "webhook_deliveries", as: "d", joins: [ENDPOINT_OF_DELIVERY],
              where: sql`d.id = ${id} and d.created_at = ${rowTimeById("webhook_deliveries", scope.organizationId, id)}`,
            });
            if (unchanged.endpoint_deleted) return yield* new InvalidTransition({ message: DELETED_ENDPOINT_REPLAY });
          }
          return { retried: rows.length };
        }),
        retryMessage: Effect.fnUntraced(function* (scope: OrgScope, messageId: number) {
          const org = orgSql(database, scope);
          const message = yield* org.one<{ created_at: Date }>({
            columns: "m.created_at", from: "webhook_messages", as: "m",
            where: sql`m.id = ${messageId} and m.created_at = ${rowTimeById("webhook_messages", scope.organizationId, messageId)}`,
          });
          const rows = yield* org.update({
            table: "webhook_deliveries",
            as: "d",
            set: DUE_AGAIN,
            // The partition key too: only the message's partition is read.
            where: sql`d.message_id = ${messageId} and d.created_at = ${message.created_at} and ${raw(RETRIABLE)}`,
            returning: "d.id",
          });
          return { retried: rows.length };
        }),
        retryFailed: Effect.fnUntraced(function* (scope: OrgScope, endpointId: number, since?: string) {
          const org = orgSql(database, scope);
          // A deleted endpoint is `NotFound`: nothing of it is replayed.
          const endpoint = yield* org.one<{ enabled: boolean }>({
            columns: "w.enabled", from: "webhook_endpoints", as: "w", where: sql`w.id = ${endpointId} and w.deleted_at is null`,
          });
          // A disabled endpoint's deliveries are not replayed (see `ENDPOINT_ENABLED`).
          if (!endpoint.enabled) return { retried: 0 };
          const failing = allOf([
            sql`d.endpoint_id = ${endpointId}`,
            raw(FAILING),
            ...(since === undefined ? [] : [sql`d.created_at >= ${since}::timestamptz`]),
          ])!;
          // Walks the failing deliveries oldest first, `REPLAY_BATCH_SIZE` at a time: each batch's
          // keys are read, then that key range is made due again in one statement of its own. The
          // walk only moves forward, so a delivery that fails again meanwhile is not replayed twice.
          let retried = 0;
          let after: { readonly created_at: string; readonly id: string } | undefined;
          for (;;) {
            const from = after === undefined ? undefined : sql`(d.created_at, d.id) > (${after.created_at}::timestamptz, ${after.id}::bigint)`;
            const batch = yield* org.select<{ id: string; created_at: string }>({
              columns: `d.id, ${isoTimestamp("d.created_at")} as created_at`,
              from: "webhook_deliveries",
              as: "d",
              where: from === undefined ? failing : sql`${failing} and ${from}`,
              rest: sql`order by d.created_at, d.id limit ${REPLAY_BATCH_SIZE}`,
            });
            const last = batch.at(-1);
            if (last === undefined) break;
            const upTo = sql`(d.created_at, d.id) <= (${last.created_at}::timestamptz, ${last.id}::bigint)`;
            const rows = yield* org.update({
              table: "webhook_deliveries",
              as: "d",
              set: DUE_AGAIN,
              where: from === undefined ? sql`${failing} and ${upTo}` : sql`${failing} and ${from} and ${upTo}`,
              returning: "d.id",
            });
            retried += rows.length;
            if (batch.length < REPLAY_BATCH_SIZE) break;
            after = last;
          }
          return { retried };
        }),
      });
    }),
  );
}
