import type { EntityManager } from "@mikro-orm/postgresql";
import { type AttemptRecord, type DueDelivery, type StoredMessage, subscribes } from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { listenForOutbox, type OutboxListener } from "./outbox-listener.ts";
import { traced } from "../traced.ts";

/**
 * The delivery queue: the dispatcher's storage. Outbox fan-out, leased claims with FOR UPDATE SKIP
 * LOCKED (so any number of dispatchers share the work without running the same attempt twice), and
 * batched result writes (one transaction for many attempts keeps throughput high).
 *
 * The one system-level store: a dispatcher serves every organization, so these statements work
 * across organizations by design, carrying each row's own organization along. It is not part of
 * the API's runtime, and it reads no organization data for anyone.
 */

interface MessageRow {
  id: string;
  organization_id: string;
  envelope_id: string;
  type: string;
  created_at: string;
  payload: unknown;
}

interface EndpointRow {
  id: string;
  organization_id: string;
  event_types: string[];
}

interface DueRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  envelope_id: string;
  body: string;
  attempts: number;
  lease_token: string;
}

/** Postgres array literal of integers, passed as one bound string. */
export const bigintArray = (ids: ReadonlyArray<string | number>): string => `{${ids.join(",")}}`;

const fanOut = (orm: Database["Service"]["orm"]) => async (
  limit: number,
  bodyOf: (message: StoredMessage) => string | undefined,
  firstAttemptDelayMs: number,
) => {
  // Most rounds find the outbox empty: one cheap look first instead of a transaction's three round trips.
  const [waiting] = await orm.em.getConnection().execute<{ id: string }[]>(
    "select id from webhook_messages where fanned_out_at is null order by id limit 1",
  );
  if (waiting === undefined) return 0;
  return orm.em.fork().transactional(async (em: EntityManager) => {
    const messages = await em.execute<MessageRow[]>(
      `select m.id, m.organization_id, m.envelope_id, m.type, ${isoTimestamp("m.created_at")} as created_at, m.payload
       from webhook_messages m where m.fanned_out_at is null order by m.id limit ? for update skip locked`,
      [limit],
    );
    if (messages.length === 0) return 0;
    const organizations = [...new Set(messages.map((m) => m.organization_id))];
    const endpoints = await em.execute<EndpointRow[]>(
      "select id, organization_id, event_types from webhook_endpoints where enabled and organization_id = any(?::bigint[])",
      [bigintArray(organizations)],
    );
    const deliveries = messages.flatMap((message) => {
      const body = bodyOf({ envelopeId: message.envelope_id, type: message.type, createdAt: message.created_at, payload: message.payload });
      if (body === undefined) return []; // an unreadable payload version: nothing sensible to send
      return endpoints
        .filter((ep) => ep.organization_id === message.organization_id && subscribes(ep.event_types, message.type))
        .map((ep) => ({
          organization_id: message.organization_id,
          endpoint_id: ep.id,
          message_id: message.id,
          envelope_id: message.envelope_id,
          event_type: message.type,
          body,
        }));
    });
    if (deliveries.length > 0) {
      await em.execute(
        `insert into webhook_deliveries (organization_id, endpoint_id, message_id, envelope_id, event_type, body,
           next_attempt_at)
         select organization_id, endpoint_id, message_id, envelope_id, event_type, body,
           now() + ? * interval '1 millisecond'
         from jsonb_to_recordset(?::jsonb) as d(organization_id bigint, endpoint_id bigint, message_id bigint,
           envelope_id text, event_type text, body text)
         on conflict (endpoint_id, message_id) do nothing`,
        [firstAttemptDelayMs, JSON.stringify(deliveries)],
      );
    }
    await em.execute("update webhook_messages set fanned_out_at = now() where id = any(?::bigint[])", [
      bigintArray(messages.map((m) => m.id)),
    ]);
    return messages.length;
  });
};

const claimDue = (orm: Database["Service"]["orm"]) => async (limit: number, leaseMs: number, nowMs: number): Promise<DueDelivery[]> => {
  // A claim must walk the due index in order and stop after `limit` rows. Right after a burst of
  // fan-out the statistics lag behind and the planner would sort every pending row on each claim
  // instead (tens of ms per claim at 100k pending, measured by npm run bench:webhooks).
  const rows = await orm.em.fork().transactional(async (em: EntityManager) => {
    await em.execute("set local enable_sort = off");
    return em.execute<DueRow[]>(
      `with due as (
         select d.id from webhook_deliveries d
         join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
         where d.status = 'pending' and d.next_attempt_at <= now()
           and (d.lease_expires_at is null or d.lease_expires_at < now())
         order by d.next_attempt_at, d.id
         limit ? for update of d skip locked
       )
       update webhook_deliveries d
         set lease_token = gen_random_uuid(), lease_expires_at = now() + (? * interval '1 millisecond'),
             attempts = d.attempts + 1
       from due, webhook_endpoints e
       where d.id = due.id and e.id = d.endpoint_id
       returning d.id, d.organization_id, d.endpoint_id, e.url, e.secret,
         case when e.previous_secret_until > ?::timestamptz then e.previous_secret end as previous_secret,
         d.envelope_id, d.body, d.attempts, d.lease_token`,
      [limit, leaseMs, new Date(nowMs).toISOString()],
    );
  });
  return rows.map((row) => ({
    id: Number(row.id),
    organizationId: Number(row.organization_id),
    endpointId: Number(row.endpoint_id),
    url: row.url,
    secret: row.secret,
    previousSecret: row.previous_secret ?? undefined,
    envelopeId: row.envelope_id,
    body: row.body,
    attempt: row.attempts,
    leaseToken: row.lease_token,
  }));
};

const RESULT_COLUMNS = `r(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_at timestamptz, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint)`;

/** jsonb (and text) cannot hold NUL: a receiver's bytes must never make a result unwritable. */
const storable = (text: string | undefined): string | null => (text === undefined ? null : text.replaceAll("\u0000", "\uFFFD"));

const toResultRow = (r: AttemptRecord) => ({
  delivery_id: r.delivery.id,
  organization_id: r.delivery.organizationId,
  endpoint_id: r.delivery.endpointId,
  lease_token: r.delivery.leaseToken,
  attempt: r.delivery.attempt,
  started_at: r.startedAt.toISOString(),
  duration_ms: Math.round(r.durationMs),
  status_code: r.statusCode ?? null,
  error: storable(r.error),
  response_body: storable(r.responseBody),
  outcome: r.outcome,
  retry_delay_ms: r.outcome === "failed" ? (r.retryDelayMs ?? null) : null,
});

const recordAttempts = (orm: Database["Service"]["orm"]) => async (records: ReadonlyArray<AttemptRecord>, failureWindowMs: number) => {
  if (records.length === 0) return;
  const json = JSON.stringify(records.map(toResultRow));
  const recordset = `jsonb_to_recordset(?::jsonb) as ${RESULT_COLUMNS}`;
  await orm.em.fork().transactional(async (em: EntityManager) => {
    await em.execute(
      `insert into webhook_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, status_code, error,
         response_body, next_attempt_at)
       select organization_id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body,
         case when retry_delay_ms is not null then now() + retry_delay_ms * interval '1 millisecond' end
       from ${recordset}`,
      [json],
    );
    // Only the current lease holder may move the delivery on.
    await em.execute(
      `update webhook_deliveries d set
         status = case when r.outcome = 'succeeded' then 'succeeded'
                       when r.retry_delay_ms is null then 'failed' else 'pending' end,
         next_attempt_at = case when r.retry_delay_ms is not null
                                then now() + r.retry_delay_ms * interval '1 millisecond' else d.next_attempt_at end,
         completed_at = case when r.outcome = 'succeeded' or r.retry_delay_ms is null then now() end,
         lease_token = null, lease_expires_at = null
       from ${recordset}
       where d.id = r.delivery_id and d.lease_token = r.lease_token`,
      [json],
    );
    // 410 disables at once; otherwise an endpoint is disabled once it has failed for the whole window.
    await em.execute(
      `with s as (
         select endpoint_id, bool_or(outcome = 'succeeded') as any_success, bool_or(outcome = 'gone') as gone
         from ${recordset} group by endpoint_id
       ), next as (
         select e.id, s.gone,
           case when s.any_success then null else coalesce(e.failing_since, now()) end as failing_since
         from webhook_endpoints e join s on s.endpoint_id = e.id
       )
       update webhook_endpoints e set
         failing_since = next.failing_since,
         enabled = e.enabled and not next.gone
           and not coalesce(next.failing_since < now() - (? * interval '1 millisecond'), false),
         disabled_reason = case
           when next.gone then 'endpoint answered 410 Gone'
           when coalesce(next.failing_since < now() - (? * interval '1 millisecond'), false)
             then 'every delivery failed for the whole failure window'
           else e.disabled_reason end
       from next where e.id = next.id`,
      [json, failureWindowMs, failureWindowMs],
    );
  });
};

export class DeliveryQueue extends Context.Service<
  DeliveryQueue,
  {
    /**
     * Turns up to `limit` unprocessed messages into one delivery per subscribed, enabled endpoint,
     * in the transaction that reads them. `bodyOf` renders the bytes to send; the first try is due
     * `firstAttemptDelayMs` from now. Returns how many messages were processed.
     */
    readonly fanOut: (
      limit: number,
      bodyOf: (message: StoredMessage) => string | undefined,
      firstAttemptDelayMs: number,
    ) => Effect.Effect<number>;
    /** Leases up to `limit` due deliveries of enabled endpoints for `leaseMs`. */
    readonly claimDue: (limit: number, leaseMs: number) => Effect.Effect<DueDelivery[]>;
    /**
     * Writes attempt results in one transaction. A result whose lease was lost (expired and taken
     * by another dispatcher) is still logged as an attempt but does not change the delivery.
     * Endpoints that answered 410, or failed for longer than `failureWindowMs`, are disabled.
     */
    readonly recordAttempts: (records: ReadonlyArray<AttemptRecord>, failureWindowMs: number) => Effect.Effect<void>;
    /** Pending deliveries, for the queue-depth gauge. */
    readonly queueDepth: () => Effect.Effect<number>;
    /** Milliseconds until the next pending delivery is due (undefined when none), to sleep exactly. */
    readonly nextDueInMs: () => Effect.Effect<number | undefined>;
    /** Calls `onMessage` whenever messages commit (LISTEN/NOTIFY on a connection of its own). */
    readonly listen: (onMessage: () => void, onError: (error: unknown) => void) => OutboxListener;
  }
>()("platter/persistence/DeliveryQueue") {
  static readonly layer = Layer.effect(
    DeliveryQueue,
    Effect.gen(function* () {
      const { orm, rows, url } = yield* Database;
      const fanOutWith = fanOut(orm);
      const claimWith = claimDue(orm);
      const recordWith = recordAttempts(orm);
      return DeliveryQueue.of({
        fanOut: traced("DeliveryQueue.fanOut")((limit: number, bodyOf: (message: StoredMessage) => string | undefined, delayMs: number) =>
          Effect.promise(() => fanOutWith(limit, bodyOf, delayMs)),
        ),
        // A rotated endpoint's previous secret signs too until its overlap ends, by this Clock.
        claimDue: traced("DeliveryQueue.claimDue")((limit: number, leaseMs: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (nowMs) => Effect.promise(() => claimWith(limit, leaseMs, nowMs))),
        ),
        recordAttempts: traced("DeliveryQueue.recordAttempts")((records: ReadonlyArray<AttemptRecord>, failureWindowMs: number) =>
          Effect.promise(() => recordWith(records, failureWindowMs)),
        ),
        queueDepth: traced("DeliveryQueue.queueDepth")(Effect.fnUntraced(function* () {
          const [row] = yield* rows<{ n: string }>("select count(*) as n from webhook_deliveries where status = 'pending'");
          return Number(row?.n ?? 0);
        })),
        nextDueInMs: traced("DeliveryQueue.nextDueInMs")(Effect.fnUntraced(function* () {
          // A leased delivery is not due before its lease runs out.
          const [row] = yield* rows<{ ms: number | null }>(
            `select extract(epoch from (min(greatest(d.next_attempt_at, coalesce(d.lease_expires_at, d.next_attempt_at)))
               - now())) * 1000 as ms
             from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id and e.enabled
             where d.status = 'pending'`,
          );
          return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
        })),
        listen: (onMessage, onError) => listenForOutbox(url, onMessage, onError),
      });
    }),
  );
}
