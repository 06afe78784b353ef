import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createEmptyDatabase, withRawClient } from "@platter/testing";
import { openOrm } from "../src/database.ts";
import type { MikroORM } from "@mikro-orm/postgresql";

/**
 * Migration20261202000000HistoryByTime moves a populated history into time partitions intact: the
 * migrations up to the one before it, rows written (one a month old), then it.
 */

let database: Awaited<ReturnType<typeof createEmptyDatabase>>;
let url: string;
let orm: MikroORM;
beforeAll(async () => {
  database = await createEmptyDatabase(inject("pgAdminUrl"));
  url = database.url;
  orm = await openOrm(url, 2);
}, 60_000);
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

/** Messages, deliveries and attempts joined as the log reads them, in id order. */
const history = (statement = `
  select m.id as message, m.envelope_id, m.created_at, d.id as delivery, d.status, a.id as attempt, a.status_code
  from webhook_messages m join webhook_deliveries d on d.message_id = m.id join webhook_attempts a on a.delivery_id = d.id
  order by m.id, d.id, a.id`) => withRawClient(url, async (client) => (await client.query(statement)).rows);

describe("Migration20261202000000HistoryByTime", () => {
  it("moves every message, delivery and attempt into time partitions, ids, envelope ids and joins kept, and the identities carried on", async () => {
    await orm.migrator.up({ to: "Migration20261130050000MessageFeedOrder" });
    await withRawClient(url, async (client) => {
      const { rows: [org] } = await client.query<{ id: string }>("insert into organizations (name, currency) values ('Moving Co', 'EUR') returning id");
      const { rows: [endpoint] } = await client.query<{ id: string }>(
        "insert into webhook_endpoints (organization_id, url, origin, secret) values ($1, 'https://198.51.100.5/h', 'https://198.51.100.5', 'x') returning id", [org!.id]);
      for (const age of ["30 days", "2 days", "0 days"]) {
        const { rows: [message] } = await client.query<{ id: string }>(
          `insert into webhook_messages (organization_id, type, payload, created_at) values ($1, 'client.created', '{}', now() - $2::interval) returning id`, [org!.id, age]);
        const { rows: [delivery] } = await client.query<{ id: string }>(
          `insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, created_at)
           select $1, $2, m.id, 'failed', m.created_at from webhook_messages m where m.id = $3 returning id`, [org!.id, endpoint!.id, message!.id]);
        await client.query(
          `insert into webhook_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, status_code) values ($1, $2, 1, now(), 5, 500), ($1, $2, 2, now(), 5, 503)`,
          [org!.id, delivery!.id]);
      }
    });
    const before = await history();
    expect(before).toHaveLength(6);

    await orm.migrator.up();

    expect(await history()).toEqual(before);
    const partitions = await withRawClient(url, async (client) => (await client.query<{ parent: string; n: number }>(
      `select i.inhparent::regclass::text as parent, count(*)::int as n from pg_inherits i
       where i.inhparent in ('webhook_messages'::regclass, 'webhook_deliveries'::regclass, 'webhook_attempts'::regclass) group by 1 order by 1`)).rows);
    // A day each from the oldest row's day to 8 days ahead: the same bounds in each table.
    expect(partitions.map((p) => p.parent)).toEqual(["webhook_attempts", "webhook_deliveries", "webhook_messages"]);
    expect(new Set(partitions.map((p) => p.n)).size).toBe(1);
    expect(partitions[0]!.n).toBeGreaterThanOrEqual(38);
    // Each attempt carries its delivery's created_at, the partition key.
    expect(await history(`select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id and d.created_at = a.delivery_created_at`))
      .toEqual([{ n: 6 }]);
    // The identities go on after the moved rows.
    const [next] = await history(`insert into webhook_messages (organization_id, type, payload) select organization_id, 'client.created', '{}' from webhook_messages limit 1 returning id`);
    expect(Number(next.id)).toBeGreaterThan(Math.max(...before.map((row) => Number(row.message))));
  });
});
