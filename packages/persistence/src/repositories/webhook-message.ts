import {
  type DatabaseUnavailable, encodeCursor, envelopeBody, type FeedMessage, type FeedRow, type ListPage, type MessageFeedFilter, messageFeedListing,
  type OrgScope, type PageRequest, storedMessage, type WebhookMessage,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, raw, sql, type Statement } from "../org-sql.ts";
import { currentTraceparent } from "../statement-spans.ts";

/**
 * SQL for a new message's envelope id that carries its `created_at`: `evt_` and 32 hex digits laid out as a UUIDv7
 * (RFC 9562): 48 bits of milliseconds since 1970 (the transaction's `now()` as the column keeps it, so exactly the
 * message's `created_at`), the version digit 7, then 74 random bits of a v4 UUID with its variant bits. Still `evt_` and
 * 32 hex digits, unique (74 random bits within one millisecond) and opaque to receivers; only a lookup by it reads its
 * time (`envelopeIdTime`), so it finds the message in its partition. The column's default (random, v4) stays for rows
 * other writers make (seeds, tests).
 */
const TIMED_ENVELOPE_ID = `'evt_' || lpad(to_hex((extract(epoch from now()::timestamptz(3)) * 1000)::bigint), 12, '0')
  || '7' || substr(replace(gen_random_uuid()::text, '-', ''), 14)`;

/** An envelope id `TIMED_ENVELOPE_ID` made: its 48 bits of milliseconds, the version 7, the variant. */
const TIMED_ENVELOPE_ID_SHAPE = /^evt_([0-9a-f]{12})7[0-9a-f]{3}[89ab][0-9a-f]{15}$/;

/** The first millisecond of year 10000: an id saying a later time (only one made up) would be a time PostgreSQL cannot read as ISO. */
const YEAR_10000_MS = Date.UTC(10_000, 0, 1);

/**
 * The time an envelope id says its message was made (ISO, milliseconds: its `created_at`, unless the row was moved back
 * since), or `undefined` for one that carries none (made random before the ids carried their time, or not ours).
 */
export const envelopeIdTime = (envelopeId: string): string | undefined => {
  const match = TIMED_ENVELOPE_ID_SHAPE.exec(envelopeId);
  const ms = match === null ? undefined : Number.parseInt(match[1]!, 16);
  return ms === undefined || ms >= YEAR_10000_MS ? undefined : new Date(ms).toISOString();
};

/**
 * SQL for a time the message with envelope id `envelopeId` was made at or before: its id's time (`envelopeIdTime`), else
 * the clock (a minute more, as `madeBeforeById`), which leaves out only the partitions made ahead. Read newest first from
 * it (`order by created_at desc limit 1`), a message is found in its id's partition; one moved back since costs a probe
 * per partition between, never a missing row.
 */
export const madeBeforeByEnvelopeId = (envelopeId: string): Statement => {
  const time = envelopeIdTime(envelopeId);
  return time === undefined ? raw("(select clock_timestamp() + interval '1 minute')") : sql`${time}::timestamptz`;
};

/**
 * Writes `message` (through the domain's schema) and one delivery of it to each endpoint of the
 * scope matching `endpoints`, a local listener's marked `via_listener` (forwarded by `platter
 * listen`, never sent by a dispatcher); returns the message's id. Its envelope id carries its time
 * (`TIMED_ENVELOPE_ID`). The dispatchers are woken once the transaction commits.
 */
const writeMessage = (tx: OrgSql, message: WebhookMessage, endpoints: Statement): Effect.Effect<number, DatabaseUnavailable> => {
  const { type, payload } = storedMessage(message);
  // The creating request's trace (null when nothing traces it): each attempt's span joins it.
  const insert = (traceparent: string | null) =>
    Effect.map(
      tx.insertReturning<{ id: string }>(
        "webhook_messages", "envelope_id, type, payload, traceparent", sql`${raw(TIMED_ENVELOPE_ID)}, ${type}, ${JSON.stringify(payload)}::jsonb, ${traceparent}`, "id"),
      ([row]) => Number(row!.id),
    );
  return Effect.tap(tx.traced ? Effect.flatMap(currentTraceparent, insert) : insert(null), (messageId) =>
    Effect.flatMap(
      tx.insertFrom({
        into: "webhook_deliveries",
        columns: "endpoint_id, message_id, via_listener",
        values: sql`e.id, ${messageId}::bigint, e.listener_key_id is not null`,
        from: "webhook_endpoints",
        as: "e",
        where: endpoints,
      }),
      (deliveries) => (deliveries > 0 ? tx.wakeDispatchersOnCommit : Effect.void),
    ));
};

/**
 * Records a webhook message and its deliveries, one per enabled endpoint (never a deleted one) of the organization
 * subscribed to its type (a local listener only while one is connected), in the caller's
 * transaction: they exist exactly when the change they report does, and a message goes to the
 * endpoints subscribed when it happened. Written through the domain's message schema. (An empty
 * `event_types` subscribes to every type, as the domain's `subscribes` says.)
 */
export const recordMessage = (tx: OrgSql, message: WebhookMessage): Effect.Effect<number, DatabaseUnavailable> =>
  writeMessage(tx, message, sql`e.enabled and e.deleted_at is null and (e.listener_key_id is null or e.listening_until > now())
    and (cardinality(e.event_types) = 0 or ${message.type}::text = any(e.event_types))`);

/**
 * Records a test message and one delivery of it, to endpoint `endpointId` only (enabled, and
 * whatever types it subscribes to), in the caller's transaction: the dispatcher sends it signed like
 * any other. Written through the domain's message schema; returns the delivery's id, or `undefined`
 * when the scope has no such enabled endpoint (the message is then written too: roll back).
 */
export const recordTestMessage = (tx: OrgSql, message: WebhookMessage, endpointId: number): Effect.Effect<number | undefined, DatabaseUnavailable> =>
  Effect.flatMap(writeMessage(tx, message, sql`e.id = ${endpointId} and e.enabled and e.deleted_at is null`), (messageId) =>
    Effect.map(
      tx.select<{ id: string }>({
        columns: "d.id",
        from: "webhook_deliveries",
        as: "d",
        // Its time too, the partition key: written by this transaction, so at its `now()` as the column keeps it (milliseconds).
        // One partition is read, not a probe of each.
        where: sql`d.message_id = ${messageId} and d.endpoint_id = ${endpointId} and d.created_at = now()::timestamptz(3)`,
      }),
      ([row]) => (row === undefined ? undefined : Number(row.id)),
    ));

/**
 * The feed's horizon: only messages made before the start of the oldest transaction still open on
 * this database are read. A message's `created_at` is its transaction's `now()`, its start, so one
 * still to commit (or still to be written by an open transaction) is never older than that: a
 * reader that went past a message never finds an older one appear behind it (no gap), however long
 * a writer's transaction lasts. The reading statement's own transaction is among those open, so the
 * horizon is at most its `now()`. It is cut to the millisecond: `created_at` keeps milliseconds,
 * rounded, so a transaction's messages are never older than its start cut so. Written `is true`, a
 * filter and not a bound of an index: a second bound of `created_at` beside the cursor's made the
 * generic plan walk the retention index across every organization (log-page-plans.test.ts). (It reads the sessions of the database's role, as every Platter
 * process connects with one; an open transaction of another role is not seen.)
 */
const SETTLED_MESSAGES = raw(`(m.created_at < (
  select date_trunc('milliseconds', min(open.xact_start)) from pg_stat_activity open
  where open.datname = current_database() and open.backend_type = 'client backend' and open.xact_start is not null)) is true`);

/** A message as the feed reads it: its key, envelope id, type, time and payload. */
interface FeedDbRow {
  id: string;
  envelope_id: string;
  type: string;
  created_at: string;
  payload: unknown;
}

/** A feed row with the envelope's exact bytes, as a delivery sends them (`envelopeBody`). */
const toFeedRow = (row: FeedDbRow): FeedRow => ({
  position: Number(row.id),
  id: row.envelope_id,
  type: row.type,
  created_at: row.created_at,
  body: envelopeBody({ envelopeId: row.envelope_id, type: row.type, createdAt: row.created_at, payload: row.payload }) ?? null,
});

/** A feed page's message with the cursor that resumes after it. */
const toFeedMessage = (row: FeedRow): FeedMessage => ({
  id: row.id, type: row.type, created_at: row.created_at, body: row.body, cursor: encodeCursor(messageFeedListing.endpoint, messageFeedListing.keyOf(row)),
});

/**
 * The organization's webhook messages as a store: a use case records the message of its change
 * (`recordMessage`: the message and its deliveries) inside the change's transaction (`inOneTransaction`).
 */
export class WebhookMessages extends Context.Service<
  WebhookMessages,
  {
    /** `recordMessage` for the scope, in the caller's transaction; returns the message's id. */
    readonly record: (scope: OrgScope, message: WebhookMessage) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * One page of the message feed (`messageFeedListing`: oldest first), filtered by type; only messages settled behind every open transaction (`SETTLED_MESSAGES`). Read on the
     * primary: the horizon is the primary's sessions'.
     */
    readonly feed: (scope: OrgScope, filter: MessageFeedFilter, page: PageRequest<readonly [string, number]>) =>
      Effect.Effect<ListPage<FeedMessage>, DatabaseUnavailable>;
  }
>()("platter/persistence/WebhookMessages") {
  static readonly layer = Layer.effect(
    WebhookMessages,
    Effect.gen(function* () {
      const database = yield* Database;
      return WebhookMessages.of({
        record: (scope: OrgScope, message: WebhookMessage) => recordMessage(orgSql(database, scope), message),
        feed: (scope, filter, page) =>
          Effect.map(
            readKeysetPage(orgSql(database, scope), messageFeedListing, {
              columns: `m.id, m.envelope_id, m.type, ${isoTimestamp("m.created_at")} as created_at, m.payload`,
              from: "webhook_messages",
              as: "m",
              keyColumns: ["m.created_at", "m.id"],
              keyCasts: ["timestamptz", "bigint"],
              filter: [SETTLED_MESSAGES, ...(filter.eventTypes.length === 0 ? [] : [sql`m.type = any(${filter.eventTypes}::text[])`])],
            }, page, toFeedRow),
            (read) => ({ ...read, data: read.data.map(toFeedMessage) }),
          ),
      });
    }),
  );
}
