import type { Orm } from "@platter/persistence";
import type { SingleEvents } from "./measurements.ts";

/**
 * Events for the Platter dispatcher, written straight into `outbox_events` as the API writes them:
 * type `client.created`, payload version 1, `created_at` = now() of the inserting transaction.
 */

const PAYLOAD = "jsonb_build_object('version', 1, 'data', jsonb_build_object('id', n, 'name', 'Client ' || n))";

/** Commits `count` events in one statement: the backlog a dispatcher then drains. */
export const enqueueBacklog = async (orm: Orm, organizationId: number, count: number): Promise<void> => {
  const connection = orm.em.getConnection();
  await connection.execute(
    `insert into outbox_events (organization_id, type, payload)
     select ?, 'client.created', ${PAYLOAD} from generate_series(1, ?::int) n`,
    [organizationId, count],
  );
  await connection.execute("analyze outbox_events");
};

/** Single events, each its own transaction; commit times come from the rows' `created_at`. */
export const outboxSingleEvents = (orm: Orm, organizationId: number): SingleEvents => ({
  commitOne: async (n) => {
    const [row] = await orm.em.getConnection().execute<{ envelope_id: string }[]>(
      `insert into outbox_events (organization_id, type, payload)
       select ?, 'client.created', ${PAYLOAD} from (select ?::int as n) s returning envelope_id`,
      [organizationId, n],
    );
    return row!.envelope_id;
  },
  commitTimes: async (envelopeIds) => {
    const rows = await orm.em.getConnection().execute<{ envelope_id: string; ms: number }[]>(
      "select envelope_id, extract(epoch from created_at)::float8 * 1000 as ms from outbox_events where envelope_id = any(?::text[])",
      [`{${envelopeIds.join(",")}}`],
    );
    return new Map(rows.map((r) => [r.envelope_id, Number(r.ms)]));
  },
});
