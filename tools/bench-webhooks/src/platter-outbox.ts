import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DELIVERIES_NOTIFY } from "@platter/persistence/dispatcher";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import type { QueueSpec, SingleEvents } from "./measurements.ts";

/**
 * The Platter side of the benchmark: a run's database (a fresh one per scenario), messages for the
 * dispatcher written straight into `webhook_messages` as the API writes them (type
 * `client.created`, payload version 1, `created_at` = now() of the inserting transaction, and in
 * the same statement one delivery per subscribed endpoint, as `recordMessage` does), and the
 * dispatcher's own record checked after a drain.
 */

/** A statement on the benchmark's own connection to `db` (set-up and checks, never the code measured). */
export const sql = <Row>(db: TestDatabase, statement: string, params: unknown[] = []) =>
  db.orm.em.getConnection().execute<Row[]>(statement, params);

/** The Platter queue as a drain watches it: the table each dispatcher reads first, and what is not settled yet. */
export const PLATTER_QUEUE: QueueSpec = {
  table: "webhook_deliveries",
  unsettledSql: "select count(*)::int as n from webhook_deliveries where status = 'pending'",
};

/**
 * A fresh migrated database with one organization and one endpoint (client.created) at the receiver;
 * BENCH_PLATTER_SETUP_SQL, when set, runs in it first (an experiment on the schema, never a migration).
 */
export const withPlatterDatabase = async <T>(
  adminUrl: string,
  receiverUrl: string,
  use: (db: TestDatabase, organizationId: number, secret: string) => Promise<T>,
): Promise<T> => {
  const db = await createTestDatabase(adminUrl);
  try {
    // An experiment's schema change (an index dropped, say), measured against the migrated schema in another run.
    const experiment = process.env["BENCH_PLATTER_SETUP_SQL"];
    if (experiment) await sql(db, experiment);
    const org = await createOrganization(db, "Bench Catering", "EUR");
    const endpoint = await db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, receiverUrl, ["client.created"], generateSigningSecret())));
    return await use(db, org.id, endpoint.secret);
  } finally {
    await db.dispose();
  }
};

/** Checks the dispatcher's own record after a run: every delivery succeeded, how many needed a second try, the attempts kept. */
export const deliveryRecord = async (db: TestDatabase, expected: number): Promise<{ line: string; attempts: number }> => {
  const [row] = await sql<{ succeeded: string; other: string; retried: string; attempts: string }>(
    db,
    `select count(*) filter (where status = 'succeeded') as succeeded, count(*) filter (where status <> 'succeeded') as other,
       count(*) filter (where attempts > 1) as retried, (select count(*) from webhook_attempts) as attempts
     from webhook_deliveries`,
  );
  const line = `recorded: ${row!.succeeded} succeeded, ${row!.other} not, ${row!.retried} tried more than once, ${row!.attempts} attempts`;
  if (Number(row!.succeeded) !== expected) throw new Error(`expected ${expected} succeeded deliveries; ${line}`);
  return { line, attempts: Number(row!.attempts) };
};

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

/** Commits `count` events in one statement, each delivered to every endpoint of the organization: the backlog a dispatcher then drains. */
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
    // As the API's writer does once its create has committed (\`OrgSql.wakeDispatchersOnCommit\`): the dispatchers are woken, not left to their poll.
    await db.orm.em.getConnection().execute(DELIVERIES_NOTIFY);
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
