import type { TestDatabase } from "@platter/persistence/testing";
import type { SingleEvents } from "./measurements.ts";

/**
 * Messages for the Platter dispatcher, written straight into `webhook_messages` as the API writes them:
 * type `client.created`, payload version 1, `created_at` = now() of the inserting transaction, and
 * in the same statement one delivery per subscribed endpoint (as `recordMessage` does).
 */

/** Inserts the messages selected by `messages` (columns organization_id, type, payload) and their deliveries. */
const withDeliveries = (messages: string, returning = "") => `with m as (
    insert into webhook_messages (organization_id, type, payload) ${messages} returning id, organization_id, type, envelope_id
  ), d as (
    insert into webhook_deliveries (organization_id, endpoint_id, message_id)
    select m.organization_id, e.id, m.id from m join webhook_endpoints e on e.organization_id = m.organization_id and e.enabled
      and (cardinality(e.event_types) = 0 or m.type = any(e.event_types))
  )
  select ${returning || "1"} from m`;

/** A `client.created` payload of version 1, as the API writes it (`storedMessage` of a created client). */
const PAYLOAD = `jsonb_build_object('version', 1, 'data', jsonb_build_object('id', n, 'name', 'Client ' || n,
  'email', null, 'phone', null, 'company', null, 'created_at', '2026-11-23T08:00:00.000Z'))`;

/** Commits `count` events in one statement: the backlog a dispatcher then drains. */
export const enqueueBacklog = async (db: TestDatabase, organizationId: number, count: number): Promise<void> => {
  const connection = db.orm.em.getConnection();
  await connection.execute(
    withDeliveries(`select ?::bigint, 'client.created', ${PAYLOAD} from generate_series(1, ?::int) n`),
    [organizationId, count],
  );
  await connection.execute("analyze webhook_messages");
  await connection.execute("analyze webhook_deliveries");
};

/** Single events, each its own transaction; commit times come from the rows' `created_at`. */
export const outboxSingleEvents = (db: TestDatabase, organizationId: number): SingleEvents => ({
  commitOne: async (n) => {
    const [row] = await db.orm.em.getConnection().execute<{ envelope_id: string }[]>(
      withDeliveries(`select ?::bigint, 'client.created', ${PAYLOAD} from (select ?::int as n) s`, "m.envelope_id"),
      [organizationId, n],
    );
    return row!.envelope_id;
  },
  commitTimes: async (envelopeIds) => {
    const rows = await db.orm.em.getConnection().execute<{ envelope_id: string; ms: number }[]>(
      "select envelope_id, extract(epoch from created_at)::float8 * 1000 as ms from webhook_messages where envelope_id = any(?::text[])",
      [`{${envelopeIds.join(",")}}`],
    );
    return new Map(rows.map((r) => [r.envelope_id, Number(r.ms)]));
  },
});
