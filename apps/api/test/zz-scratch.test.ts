import { afterAll, beforeAll, expect, it, inject } from "vitest";
import { createOrganization, createTestDatabase, DIRECT_CONNECTION, type TestDatabase } from "@platter/persistence/testing";
import { UNTHROTTLED } from "../src/rate-limits.ts";
import { startAnotherInstance } from "./api-harness.ts";
import pg from "pg";

let db: TestDatabase;
beforeAll(async () => { db = await createTestDatabase(inject("pgAdminUrl")); });
afterAll(() => db?.dispose());
it("counts statements", async () => {
  const org = await createOrganization(db);
  const api = await startAnotherInstance(db, UNTHROTTLED, { url: db.url, connection: DIRECT_CONNECTION, poolSize: 2 });
  for (let i = 0; i < 20; i++) await api.call("GET", "/v1/events?limit=5", { key: org.readKey });
  const client = new pg.Client({ connectionString: db.url }); await client.connect();
  await client.query("select pg_stat_reset()");
  await new Promise((d) => setTimeout(d, 1500));
  const before = (await client.query("select xact_commit::int as c, tup_returned::bigint as r from pg_stat_database where datname = current_database()")).rows[0];
  for (let i = 0; i < 200; i++) await api.call("GET", "/v1/events?limit=5", { key: org.readKey });
  await new Promise((d) => setTimeout(d, 2500));
  const after = (await client.query("select xact_commit::int as c from pg_stat_database where datname = current_database()")).rows[0];
  console.log("xacts per request", (after.c - before.c) / 200);
  await client.end(); await api.stop();
  expect(1).toBe(1);
});
