import { DatabaseUnavailable } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { HistoryPartitions, REQUEST_HISTORY, RequestLog } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * The request log partitioned by time (`REQUEST_HISTORY`): retention drops whole partitions, never a
 * request younger than the retention, each organization's alike; a request no partition takes is
 * refused as the database being unavailable to the store (the API's writer counts it refused and
 * writes the rest of its batch: apps/api/test/request-log.test.ts). Ages are the database clock's.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Logged Long Ago");
  b = await createOrganization(db, "Logged Lately");
});
afterAll(() => db?.dispose());

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;
const rows = <Row>(text: string, values: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(text, values);
const databaseNow = async () => new Date((await rows<{ now: Date }>("select now() as now"))[0]!.now).getTime();
const requestIds = async () => (await rows<{ request_id: string }>("select request_id from api_requests order by request_id")).map((r) => r.request_id);

/** A request of `organization` that arrived `ageMs` before `now`, named by its organization and age in hours. */
const requestOf = (organization: OrganizationFixture, now: number, ageMs: number) => ({
  organization_id: organization.id, api_key_id: organization.readKeyId, at: new Date(now - ageMs).toISOString(), method: "GET",
  route: "/v1/events", status: 200, duration_ms: 1, request_id: `req_${organization.id}_${ageMs / HOUR_MS}h`, error: null,
});

describe("the request log's retention", () => {
  it("drops the partitions past the retention whole and keeps every younger request, of every organization", async () => {
    const now = await databaseNow();
    // Partitions a day each back to 10 days ago (the migration made them back to yesterday).
    await db.run(HistoryPartitions.use((h) => h.cover(REQUEST_HISTORY, new Date(now - 10 * DAY_MS), DAY_MS)));
    const ages = [10 * DAY_MS, 5 * DAY_MS, 3 * DAY_MS + HOUR_MS, 2 * DAY_MS - HOUR_MS, DAY_MS, HOUR_MS, 0];
    const written = [...ages.map((age) => requestOf(a, now, age)), ...ages.slice(2).map((age) => requestOf(b, now, age))];
    expect(await db.run(RequestLog.use((log) => log.append(written)))).toBe(written.length);
    const before = await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)));

    const dropped = await db.run(HistoryPartitions.use((h) => h.dropExpired(REQUEST_HISTORY, 2 * DAY_MS)));

    // A day each from 10 days ago: those ending before now - 2 days went, with every request in them.
    expect(dropped).toBeGreaterThanOrEqual(7);
    expect(await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)))).toHaveLength(before.length - dropped);
    const left = await requestIds();
    const younger = written.filter((r) => Date.parse(r.at) > now - 2 * DAY_MS).map((r) => r.request_id);
    expect(left).toEqual(expect.arrayContaining(younger));
    // Past the retention and a partition's width: gone.
    const older = written.filter((r) => Date.parse(r.at) < now - 3 * DAY_MS).map((r) => r.request_id);
    expect(older).toHaveLength(4);
    expect(left.filter((id) => older.includes(id))).toEqual([]);
    const [first] = await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)));
    expect(first!.to.getTime()).toBeGreaterThan(now - 2 * DAY_MS);
    // Retention's turn on the log settles nothing (it has no deliveries) and finds nothing more to drop.
    expect(await db.run(HistoryPartitions.use((h) => h.forgetExpired(REQUEST_HISTORY, 2 * DAY_MS, 500)))).toEqual({ settled: 0, dropped: 0 });
    // The organization's page reads what is left, newest first.
    const page = await db.run(RequestLog.use((log) => log.list(b.scope, {}, { limit: 100, after: undefined })));
    expect(page.data.map((entry) => entry.request_id)).toEqual(written.filter((r) => r.organization_id === b.id && left.includes(r.request_id)).map((r) => r.request_id).reverse());
  });

  it("makes the log's partitions ahead once, however many processes ask", async () => {
    const ahead = () => db.run(HistoryPartitions.use((h) => h.makeAhead(REQUEST_HISTORY, DAY_MS, 12 * DAY_MS)));
    await Promise.all([ahead(), ahead()]);
    const partitions = await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)));
    const now = await databaseNow();
    expect(partitions.at(-1)!.to.getTime()).toBeGreaterThanOrEqual(now + 12 * DAY_MS);
    // Each starts where the one before ends.
    expect(partitions.slice(1).every((p, i) => p.from.getTime() === partitions[i]!.to.getTime())).toBe(true);
  });

  it("refuses a request no partition takes as the database being unavailable, never a defect", async () => {
    const now = await databaseNow();
    const failure = await db.run(Effect.flip(RequestLog.use((log) => log.append([requestOf(a, now, -400 * DAY_MS)]))));
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
  });

  it("drops expired partitions once when two processes drop in the same turn: neither fails, the second skips it", async () => {
    const now = await databaseNow();
    await db.run(HistoryPartitions.use((h) => h.cover(REQUEST_HISTORY, new Date(now - 9 * DAY_MS), DAY_MS)));
    const before = await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)));
    const expired = before.filter((p) => p.to.getTime() <= now - 2 * DAY_MS).length;
    expect(expired).toBeGreaterThanOrEqual(6);
    // A reader's open transaction on the log holds the first detach (it waits for the parent's lockers),
    // so both turns are under way before either finishes.
    const reader = await db.rawClient();
    try {
      await reader.query("begin");
      await reader.query("select count(*) from api_requests");
      const turns = Promise.all([
        db.run(HistoryPartitions.use((h) => h.dropExpired(REQUEST_HISTORY, 2 * DAY_MS))),
        db.run(HistoryPartitions.use((h) => h.dropExpired(REQUEST_HISTORY, 2 * DAY_MS))),
      ]);
      await waitForWaitingDetach();
      await new Promise((resume) => setTimeout(resume, 500));
      await reader.query("commit");
      const dropped = await turns;
      expect(dropped.reduce((sum, n) => sum + n, 0)).toBe(expired);
      expect(dropped).toContain(0);
    } finally {
      await reader.end();
    }
    expect(await db.run(HistoryPartitions.use((h) => h.list(REQUEST_HISTORY)))).toHaveLength(before.length - expired);
  });
});

/** Waits until a detach of a partition waits for the parent's lockers (at most 10 s). */
const waitForWaitingDetach = async () => {
  for (let tries = 0; tries < 100; tries++) {
    const [row] = await rows<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'alter table % detach partition %' and wait_event_type = 'Lock'");
    if (row!.n > 0) return;
    await new Promise((resume) => setTimeout(resume, 100));
  }
  throw new Error("no detach waited for the reader");
};
