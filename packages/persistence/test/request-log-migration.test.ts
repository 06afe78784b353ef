import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createEmptyDatabase, withRawClient } from "@platter/testing";
import { openOrm } from "../src/database.ts";
import type { MikroORM } from "@mikro-orm/postgresql";

/**
 * Migration20261203000000RequestLogByTime moves a populated request log into time partitions intact:
 * the migrations up to the one before it, requests written (one three months old), then it.
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

const query = (statement: string, values: unknown[] = []) => withRawClient(url, async (client) => (await client.query(statement, values)).rows);
const requests = () => query("select * from api_requests order by id");

describe("Migration20261203000000RequestLogByTime", () => {
  it("moves every request into time partitions, ids and columns kept, the identity carried on, and a log older than 60 days in one partition", async () => {
    await orm.migrator.up({ to: "Migration20261202000000HistoryByTime" });
    const [org] = await query("insert into organizations (name, currency) values ('Logging Co', 'EUR') returning id");
    for (const [age, status, error] of [["90 days", 500, "Boom"], ["30 days", 404, "Not found"], ["2 days", 200, null], ["0 days", 200, null]] as const) {
      await query(
        `insert into api_requests (organization_id, api_key_id, at, method, route, status, duration_ms, request_id, error)
         values ($1, 7, now() - $2::interval, 'GET', '/v1/events', $3, 2.5, 'req_' || $5, $4)`,
        [org!.id, age, status, error, age.replace(" ", "_")],
      );
    }
    const before = await requests();
    expect(before).toHaveLength(4);

    await orm.migrator.up();

    expect(await requests()).toEqual(before);
    const [table] = await query("select c.relkind from pg_class c where c.oid = 'api_requests'::regclass");
    expect(table).toEqual({ relkind: "p" });
    const partitions = await query(
      `select pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'api_requests'::regclass order by c.relname`);
    // One partition before the last 60 days, a day each from then to 8 days ahead.
    expect(partitions.length).toBeGreaterThanOrEqual(1 + 60 + 8);
    // Every row is in a partition whose bounds hold it; each day's rows in a day's partition.
    const [held] = await query("select count(*)::int as n from api_requests r where r.tableoid <> 'api_requests'::regclass");
    expect(held).toEqual({ n: 4 });
    // The identity goes on after the moved rows.
    const [next] = await query(
      `insert into api_requests (organization_id, api_key_id, at, method, route, status, duration_ms, request_id)
       values ($1, 7, now(), 'GET', '/v1/me', 200, 1, 'req_next') returning id`, [org!.id]);
    expect(Number(next!.id)).toBeGreaterThan(Math.max(...before.map((row) => Number(row.id))));
  });
});
