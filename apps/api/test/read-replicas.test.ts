import {
  createOrganization, createTestDatabase, DIRECT_CONNECTION, type OrganizationFixture, startTestReplication, type TestDatabase,
  type TestReplication,
} from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { startAnotherInstance } from "./api-harness.ts";

/**
 * GETs read from a real streaming replica (a second PostgreSQL made from a copy of the primary's
 * data directory), and fall back to the primary, with no 5xx, when it lags past the bound, is
 * stopped or frozen; a key's own writes and a revocation are seen at once however far the replica is behind.
 */

const MAX_LAG_MS = 400;
const READ_YOUR_WRITES_MS = 2_000;

let replication: TestReplication;
let db: TestDatabase;
let org: OrganizationFixture;
let api: Awaited<ReturnType<typeof startAnotherInstance>>;
let replicaName: string;

beforeAll(async () => {
  replication = await startTestReplication();
  db = await createTestDatabase(replication.primaryAdminUrl);
  org = await createOrganization(db);
  const replicaUrl = replication.replicaUrlOf(db.url);
  const parsed = new URL(replicaUrl);
  replicaName = `${parsed.hostname}:${parsed.port}${parsed.pathname}`;
  api = await startAnotherInstance(db, UNTHROTTLED, {
    url: db.url,
    connection: DIRECT_CONNECTION,
    poolSize: 4,
    replicas: { urls: [replicaUrl], maxLagMs: MAX_LAG_MS, timeoutMs: 500, readYourWritesMs: READ_YOUR_WRITES_MS },
  });
  for (let i = 0; i < 12; i++) {
    expect((await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: `Client ${i}` } })).status).toBe(201);
  }
  await replication.caughtUp();
  await replicaTakesReads();
}, 120_000);

afterAll(async () => {
  await api?.stop();
  await db?.dispose();
  await replication?.dispose();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The API's metrics as `name{labels}` → value. */
const metrics = async (): Promise<Map<string, number>> => {
  const text = await (await fetch(`${api.opsUrl}/metrics`)).text();
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^(platter_database_\w+(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
};
const replicaReads = async () => (await metrics()).get(`platter_database_reads_total{pool="${replicaName}"}`) ?? 0;
const fallbacks = async (reason: string) => (await metrics()).get(`platter_database_replica_fallbacks_total{reason="${reason}"}`) ?? 0;

/** Waits (bounded) until the API counts the replica current again. */
const replicaTakesReads = async () => {
  for (let tries = 0; tries < 300; tries++) {
    if ((await metrics()).get(`platter_database_replica_current{replica="${replicaName}"}`) === 1) return;
    await sleep(100);
  }
  throw new Error("the replica did not become current within 30 s");
};

/** Scans of `table` in the test database, as `server`'s own statistics count them. */
const scansOn = async (server: "primary" | "replica", table: string): Promise<number> => {
  const text = "select coalesce(seq_scan, 0) + coalesce(idx_scan, 0) as scans from pg_stat_user_tables where relname = $1";
  const database = new URL(db.url).pathname.slice(1);
  const rows = server === "replica"
    ? await replication.onReplica<{ scans: string }>(text, [table], database)
    : await db.orm.em.fork().getConnection().execute<Array<{ scans: string }>>(text.replace("$1", "?"), [table]);
  return Number(rows[0]?.scans ?? 0);
};

const listClients = (key: string, query = "") => api.call("GET", `/v1/clients${query}`, { key });

describe("reads on a streaming replica", () => {
  it("serves GET lists and details from the replica, as its own statistics show", async () => {
    const replicaBefore = await scansOn("replica", "clients");
    const readsBefore = await replicaReads();
    for (let i = 0; i < 20; i++) expect((await listClients(org.readKey, "?limit=5")).status).toBe(200);
    expect((await api.call("GET", "/v1/me", { key: org.readKey })).status).toBe(200);
    // Statistics reach the shared view when a backend flushes them (about once a second).
    await expect.poll(async () => (await scansOn("replica", "clients")) - replicaBefore, { timeout: 15_000 }).toBeGreaterThanOrEqual(20);
    expect((await replicaReads()) - readsBefore).toBeGreaterThanOrEqual(21);
  });

  it("shows a key its own create at once, and nobody a read staler than the bound, while the replay is paused", async () => {
    await replication.pauseReplay();
    try {
      const created = await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: "Written while the replica is paused" } });
      expect(created.status).toBe(201);
      // The writing key reads from the primary for the read-your-writes window: its record is there.
      const own = await listClients(org.writeKey, "?limit=100");
      expect(own.status).toBe(200);
      expect(own.body.data.map((client: { id: number }) => client.id)).toContain(created.body.id);
      // Past the lag bound the paused replica is left out: another key's read comes from the primary.
      await sleep(MAX_LAG_MS * 3);
      const laggingBefore = await fallbacks("lagging");
      const other = await listClients(org.readKey, "?limit=100");
      expect(other.status).toBe(200);
      expect(other.body.data.map((client: { id: number }) => client.id)).toContain(created.body.id);
      expect(await fallbacks("lagging")).toBeGreaterThan(laggingBefore);
      expect((await metrics()).get(`platter_database_replica_current{replica="${replicaName}"}`)).toBe(0);
    } finally {
      await replication.resumeReplay();
    }
    await replicaTakesReads();
    const readsBefore = await replicaReads();
    expect((await listClients(org.readKey)).status).toBe(200);
    expect(await replicaReads()).toBeGreaterThan(readsBefore);
  });

  it("refuses a revoked key on its next request, although the replica has not replayed the revocation", async () => {
    const extra = await createOrganization(db, "Revoked Catering");
    await replication.caughtUp();
    expect((await listClients(extra.readKey)).status).toBe(200);
    await replication.pauseReplay();
    try {
      await db.orm.em.fork().getConnection().execute("update api_keys set revoked_at = now() where id = ?", [extra.readKeyId]);
      const refused = await listClients(extra.readKey);
      expect(refused.status).toBe(401);
    } finally {
      await replication.resumeReplay();
    }
    await replicaTakesReads();
  });

  it("answers every read from the primary while the replica is stopped, and returns to it once it is back", async () => {
    await replication.stop();
    try {
      const before = (await fallbacks("unavailable")) + (await fallbacks("failed"));
      for (let i = 0; i < 20; i++) expect((await listClients(org.readKey, "?limit=5")).status).toBe(200);
      expect((await fallbacks("unavailable")) + (await fallbacks("failed"))).toBeGreaterThan(before);
    } finally {
      await replication.start();
    }
    await replicaTakesReads();
    const readsBefore = await replicaReads();
    expect((await listClients(org.readKey)).status).toBe(200);
    expect(await replicaReads()).toBeGreaterThan(readsBefore);
  }, 60_000);

  it("answers every read while the replica is frozen (it stops answering)", async () => {
    await replication.freeze();
    try {
      for (let i = 0; i < 10; i++) expect((await listClients(org.readKey, "?limit=5")).status).toBe(200);
      expect((await metrics()).get(`platter_database_replica_current{replica="${replicaName}"}`)).toBe(0);
    } finally {
      await replication.thaw();
    }
    await replicaTakesReads();
  }, 60_000);

  it("pages a list across a failover of reads without a skip or a repeat", async () => {
    const all = await listClients(org.readKey, "?limit=100");
    expect(all.status).toBe(200);
    const expected = all.body.data.map((client: { id: number }) => client.id);
    expect(expected.length).toBeGreaterThan(12);
    const seen: number[] = [];
    let cursor: string | null = null;
    let page = 0;
    try {
      do {
        // Two pages from the replica, then it goes away, and the walk goes on on the primary.
        if (page === 2) await replication.stop();
        const response = await listClients(org.readKey, `?limit=3${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`);
        expect(response.status).toBe(200);
        seen.push(...response.body.data.map((client: { id: number }) => client.id));
        cursor = response.body.next_cursor;
        page++;
      } while (cursor !== null);
    } finally {
      await replication.start();
    }
    expect(page).toBeGreaterThan(3);
    expect(seen).toEqual(expected);
    await replicaTakesReads();
  }, 60_000);
});
