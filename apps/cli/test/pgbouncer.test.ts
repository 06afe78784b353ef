import { createOrganization, createTestDatabase, pgBouncerBinary, startTestPgBouncer, type TestDatabase, type TestPgBouncer } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliJson } from "./cli-process.ts";

/**
 * The CLI through a real PgBouncer in transaction mode (Debian's 1.18): `DATABASE_POOLER=transaction`
 * lets `webhook add` and `key create` through (no named statement, no startup parameter the pooler
 * refuses); with named statements they fail. Skipped, saying so, on a machine without PgBouncer.
 */

const installed = pgBouncerBinary() !== undefined;
if (!installed) console.warn("pgbouncer.test.ts: skipped, pgbouncer is not installed (apt install pgbouncer)");

let db: TestDatabase;
let bouncer: TestPgBouncer;
beforeAll(async () => {
  if (!installed) return;
  db = await createTestDatabase(inject("pgAdminUrl"));
  bouncer = await startTestPgBouncer(inject("pgAdminUrl"), 4);
});
afterAll(async () => {
  await bouncer?.stop();
  await db?.dispose();
});

const rows = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

describe.skipIf(!installed)("the CLI behind PgBouncer 1.18 in transaction mode", () => {
  it("registers an endpoint and creates a key with DATABASE_POOLER=transaction", async () => {
    const org = await createOrganization(db, "Pooled");
    const env = { DATABASE_URL: bouncer.urlOf(new URL(db.url).pathname.slice(1)), DATABASE_POOLER: "transaction", WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false" };
    const endpoint = await runCliJson(["webhook", "add", "--org", String(org.id), "--url", "https://93.184.216.34/pooled"], env);
    const key = await runCliJson(["key", "create", "--org", String(org.id), "--access", "read"], env);
    expect(await rows("select url from webhook_endpoints where id = ?", [endpoint.id])).toEqual([{ url: "https://93.184.216.34/pooled" }]);
    expect(await rows("select organization_id::int from api_keys where id = ?", [key.id])).toEqual([{ organization_id: org.id }]);
  });

  it("fails with named statements, which the pooler does not track", async () => {
    const org = await createOrganization(db, "Named");
    const env = {
      DATABASE_URL: bouncer.urlOf(new URL(db.url).pathname.slice(1)), DATABASE_POOLER: "transaction", DATABASE_PREPARED_STATEMENTS: "named",
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false",
    };
    const results = await Promise.all([1, 2, 3].map((n) => runCli(["webhook", "add", "--org", String(org.id), "--url", `https://93.184.216.34/${n}`, "--json"], env)));
    expect(results.map((result) => result.stderr).join("\n")).toMatch(/prepared statement "platter_\d+" (already exists|does not exist)/);
  });
});
