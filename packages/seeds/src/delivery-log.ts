import type { MikroORM } from "@mikro-orm/postgresql";
import {
  endpointSecretContext, exampleMessage, generateSigningSecret, InvalidInput, type OrgScope, type SecretCipher, storedMessage, WEBHOOK_EVENT_TYPES,
} from "@platter/domain";
import { coverPartitionSql, WEBHOOK_HISTORY } from "@platter/persistence";

/**
 * A delivery log for load tests: `endpoints` new endpoints of one organization and `deliveries`
 * deliveries to them, with their messages and attempts, as the dispatcher would have left them
 * over the last week. One set-based statement per table; every statement binds the scope's
 * organization. Messages carry each type's example payload (stored through the domain's schema,
 * so every one renders); about 2 % of deliveries failed (three attempts, 500 with an HTML body
 * or a refused connection), 0.5 % are pending (one failed attempt, the next in an hour), the rest
 * succeeded at the first attempt.
 */

export interface DeliveryLogSeedOptions {
  readonly deliveries: number;
  /** Endpoints the deliveries are spread over, 1 to 20 (each message goes to every one). */
  readonly endpoints: number;
}

const SPAN_MS = 7 * 24 * 60 * 60 * 1000;

const FAILURE_BODY = "<html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>";

/** Seeds the log; `InvalidInput` for counts out of range. */
export const seedDeliveryLog = async (orm: MikroORM, secrets: SecretCipher, scope: OrgScope, options: DeliveryLogSeedOptions): Promise<void> => {
  const { deliveries, endpoints } = options;
  if (!Number.isInteger(deliveries) || deliveries < 1 || deliveries > 1_000_000) {
    throw new InvalidInput({ message: "deliveries must be an integer from 1 to 1000000" });
  }
  if (!Number.isInteger(endpoints) || endpoints < 1 || endpoints > 20) throw new InvalidInput({ message: "endpoints must be an integer from 1 to 20" });
  const run = <Row>(text: string, params: readonly unknown[]) => orm.em.getConnection().execute<Row[]>(text, [...params]);
  const organizationId = scope.organizationId;
  const [before] = await run<{ id: string }>("select coalesce(max(id), 0) as id from webhook_deliveries", []);
  const endpointIds = (await run<{ id: string }>(
    `insert into webhook_endpoints (organization_id, url, origin, secret, event_types)
     select ?, 'https://hooks.example.com/platter/' || g, 'https://hooks.example.com', '', '{}'
     from generate_series(1, ?) g returning id`,
    [organizationId, endpoints],
  )).map((row) => Number(row.id));
  // Each endpoint's secret sealed for its row (at most 20).
  for (const id of endpointIds) {
    await run("update webhook_endpoints set secret = ? where id = ?", [secrets.seal(generateSigningSecret(), endpointSecretContext(organizationId, id)), id]);
  }
  // Bound as JSON text: the driver would spread an array into a list of parameters.
  const types = JSON.stringify(WEBHOOK_EVENT_TYPES);
  const payloads = JSON.stringify(WEBHOOK_EVENT_TYPES.map((type) => storedMessage(exampleMessage(type)).payload));
  const messages = Math.ceil(deliveries / endpoints);
  const start = Date.now() - SPAN_MS;
  // The week's partitions: one before those the processes made, if need be (`HistoryPartitions.cover`).
  await run(coverPartitionSql(WEBHOOK_HISTORY, new Date(start), 24 * 3600_000), []);
  // Messages spread evenly over the week (ids and times increasing together), each to every new endpoint.
  await run(
    `with m as (
       insert into webhook_messages (organization_id, type, payload, created_at)
       select ?, ?::jsonb ->> (n % ?)::int, ?::jsonb -> (n % ?)::int, ?::timestamptz + (n * ?::bigint) * interval '1 millisecond'
       from generate_series(0, ? - 1) n
       returning id, created_at)
     insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, attempts, next_attempt_at, created_at, completed_at)
     select ?, e.id, m.id, s.status,
       case s.status when 'failed' then 3 else 1 end,
       case s.status when 'pending' then now() + interval '1 hour' else m.created_at end,
       m.created_at,
       case when s.status <> 'pending' then m.created_at + interval '2 seconds' end
     from m cross join unnest(?::bigint[]) e(id)
     cross join lateral (select case when (hashint8(m.id * 31 + e.id) & 1023) < 20 then 'failed'
       when (hashint8(m.id * 31 + e.id) & 1023) < 25 then 'pending' else 'succeeded' end as status) s
     order by m.id, e.id
     limit ?`,
    [
      organizationId, types, WEBHOOK_EVENT_TYPES.length, payloads, WEBHOOK_EVENT_TYPES.length, new Date(start).toISOString(),
      Math.max(1, Math.floor(SPAN_MS / messages)), messages, organizationId, `{${endpointIds.join(",")}}`, deliveries,
    ],
  );
  await run(
    `insert into webhook_attempts (organization_id, delivery_id, delivery_created_at, attempt, started_at, duration_ms, status_code, error, response_body, next_attempt_at)
     select ?, d.id, d.created_at, a.attempt, d.created_at + (a.attempt - 1) * interval '5 seconds', 40 + (hashint8(d.id + a.attempt) & 255)::int,
       case when d.status = 'succeeded' then 200 when a.attempt = 2 then null else 500 end,
       case when d.status <> 'succeeded' and a.attempt = 2 then 'connect ECONNREFUSED 203.0.113.7:443' end,
       case when d.status = 'succeeded' then '{"received":true}' when a.attempt = 2 then null else ? end,
       case when d.status = 'pending' then d.next_attempt_at when d.status = 'failed' and a.attempt < 3 then d.created_at + a.attempt * interval '5 seconds' end
     from webhook_deliveries d cross join lateral generate_series(1, d.attempts) a(attempt)
     where d.organization_id = ? and d.id > ?`,
    [organizationId, FAILURE_BODY, organizationId, before!.id],
  );
};
