import { type DatabaseUnavailable, type OrgScope, storedMessage, type WebhookMessage } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { WebhookMessageEntity } from "../entities/index.ts";
import { type OrgSql, orgSql, sql, type Statement } from "../org-sql.ts";

/**
 * Writes `message` (through the domain's schema) and one delivery of it to each endpoint of the
 * scope matching `endpoints`, a local listener's marked `via_listener` (forwarded by `platter
 * listen`, never sent by a dispatcher); returns the message's id.
 */
const writeMessage = (tx: OrgSql, message: WebhookMessage, endpoints: Statement): Effect.Effect<number, DatabaseUnavailable> => {
  const { type, payload } = storedMessage(message);
  return Effect.tap(tx.insert(WebhookMessageEntity, { type, payload }), (messageId) =>
    tx.insertFrom({
      into: "webhook_deliveries",
      columns: "endpoint_id, message_id, via_listener",
      values: sql`e.id, ${messageId}::bigint, e.listener_key_id is not null`,
      from: "webhook_endpoints",
      as: "e",
      where: endpoints,
    }));
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
 * The organization's webhook messages as a store: a use case records the message of its change
 * (`recordMessage`: the message and its deliveries) inside the change's transaction (`inOneTransaction`).
 */
export class WebhookMessages extends Context.Service<
  WebhookMessages,
  {
    /** `recordMessage` for the scope, in the caller's transaction; returns the message's id. */
    readonly record: (scope: OrgScope, message: WebhookMessage) => Effect.Effect<number, DatabaseUnavailable>;
  }
>()("platter/persistence/WebhookMessages") {
  static readonly layer = Layer.effect(
    WebhookMessages,
    Effect.gen(function* () {
      const database = yield* Database;
      return WebhookMessages.of({ record: (scope: OrgScope, message: WebhookMessage) => recordMessage(orgSql(database, scope), message) });
    }),
  );
}
