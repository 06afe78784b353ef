import {
  type DatabaseUnavailable, encodeCursor, envelopeBody, type FeedMessage, type FeedRow, type ListPage, type MessageFeedFilter, messageFeedListing,
  type OrgScope, type PageRequest, storedMessage, type WebhookMessage,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { OLDEST_OPEN_TRANSACTION } from "../database-clock.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, raw, sql, type Statement } from "../org-sql.ts";
import { currentTraceparent } from "../statement-spans.ts";

/**
 * Writes `message` (through the domain's schema) and one delivery of it to each endpoint of the
 * scope matching `endpoints`, a local listener's marked `via_listener` (forwarded by `platter
 * listen`, never sent by a dispatcher); returns the message's id. The dispatchers are woken once
 * the transaction commits.
 */
const writeMessage = (tx: OrgSql, message: WebhookMessage, endpoints: Statement): Effect.Effect<number, DatabaseUnavailable> => {
  const { type, payload } = storedMessage(message);
  // The creating request's trace (null when nothing traces it): each attempt's span joins it.
  const insert = (traceparent: string | null) =>
    Effect.map(
      tx.insertReturning<{ id: string }>("webhook_messages", "type, payload, traceparent", sql`${type}, ${JSON.stringify(payload)}::jsonb, ${traceparent}`, "id"),
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
      tx.select<{ id: string }>({ columns: "d.id", from: "webhook_deliveries", as: "d", where: sql`d.message_id = ${messageId} and d.endpoint_id = ${endpointId}` }),
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
const SETTLED_MESSAGES = raw(`(m.created_at < date_trunc('milliseconds', ${OLDEST_OPEN_TRANSACTION})) is true`);

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
