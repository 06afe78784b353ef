import { createOrganization, createTestDatabase, type OrganizationFixture, pgBouncerBinary, startTestPgBouncer, type TestDatabase, type TestPgBouncer } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { startAnotherInstance } from "./api-harness.ts";

/**
 * The API behind a real PgBouncer in transaction mode with 4 server connections (Debian's 1.18,
 * without prepared-statement support): with `DATABASE_POOLER=transaction` every request is
 * answered; with named statements, as without the setting, they fail. Skipped, saying so, on a
 * machine without PgBouncer (`apt install pgbouncer`).
 */

const installed = pgBouncerBinary() !== undefined;
if (!installed) console.warn("pgbouncer.test.ts: skipped, pgbouncer is not installed (apt install pgbouncer)");

let db: TestDatabase;
let bouncer: TestPgBouncer;
let org: OrganizationFixture;

beforeAll(async () => {
  if (!installed) return;
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  bouncer = await startTestPgBouncer(inject("pgAdminUrl"), 4);
});
afterAll(async () => {
  await bouncer?.stop();
  await db?.dispose();
});

/** `total` requests, `parallel` at a time, of every kind the API serves most: lists, a detail, a create. */
const mixedLoad = async (api: Awaited<ReturnType<typeof startAnotherInstance>>, total: number, parallel: number) => {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const response = i % 4 === 0
        ? await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: `Client ${i}` } })
        : await api.call("GET", i % 4 === 1 ? "/v1/clients?limit=5" : i % 4 === 2 ? "/v1/events?limit=5" : "/v1/me", { key: org.readKey });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return Object.fromEntries(statuses);
};

describe.skipIf(!installed)("behind PgBouncer 1.18 in transaction mode", () => {
  it("answers every request with DATABASE_POOLER=transaction (statements unnamed)", async () => {
    const database = bouncer.urlOf(new URL(db.url).pathname.slice(1));
    const api = await startAnotherInstance(db, UNTHROTTLED, { url: database, connection: { pooler: "transaction" }, poolSize: 10 });
    try {
      const statuses = await mixedLoad(api, 600, 20);
      expect(statuses, await bouncer.log()).toEqual({ 200: 450, 201: 150 });
    } finally {
      await api.stop();
    }
  });

  it("fails requests with named statements, as before the setting", async () => {
    const database = bouncer.urlOf(new URL(db.url).pathname.slice(1));
    const api = await startAnotherInstance(db, UNTHROTTLED, { url: database, connection: { pooler: "transaction", preparedStatements: "named" }, poolSize: 10 });
    try {
      const statuses = await mixedLoad(api, 200, 20);
      expect(statuses[500] ?? 0).toBeGreaterThan(0);
    } finally {
      await api.stop();
    }
  });
});
