import { DatabaseUnavailable, generateSigningSecret, SETTLED_HISTORY_EXPIRED } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryRepository, HistoryPartitions, REQUEST_HISTORY, WEBHOOK_HISTORY, WebhookEndpointRepository } from "../src/index.ts";
import { Database } from "../src/database.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { backdateHistory, createOrganization, createTestDatabase, type TestDatabase, nothingHeld, testDeliveryPolicy } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * History partitioned by time (`HistoryPartitions`): retention drops whole partitions, the three
 * tables' together, never a row younger than the retention; a delivery still pending once it is
 * older than the retention is settled first ("history expired"), replayable until the drop.
 * The window is the database's clock's: time moves by moving rows (`backdateHistory`).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const DAY_MS = 24 * 3600_000;
const rows = <Row>(text: string, values: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(text, values);
const countsOf = async (organizationId: number) => {
  const [row] = await rows<{ messages: number; deliveries: number; attempts: number }>(
    `select (select count(*)::int from webhook_messages where organization_id = ?) as messages,
       (select count(*)::int from webhook_deliveries where organization_id = ?) as deliveries,
       (select count(*)::int from webhook_attempts where organization_id = ?) as attempts`,
    [organizationId, organizationId, organizationId],
  );
  return row!;
};
const partitionNames = async () =>
  (await rows<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent in ('webhook_messages'::regclass, 'webhook_deliveries'::regclass, 'webhook_attempts'::regclass) order by 1`,
  )).map((row) => row.name);

/** An organization with one endpoint, `n` messages to it, each delivery tried once and failed (so pending, with an attempt). */
const organizationWithTriedDeliveries = async (name: string, n: number) => {
  const org = await createOrganization(db, name);
  await db.run(Effect.gen(function* () {
    yield* (yield* WebhookEndpointRepository).add(org.scope, `https://198.51.100.9/${org.id}`, [], generateSigningSecret());
    for (let i = 0; i < n; i++) yield* createClient(org.scope, { name: `${name} ${i}` });
    const queue = yield* DeliveryQueue;
    const { due } = yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld);
    yield* queue.recordAttempts(
      due.filter((d) => d.organizationId === org.id).map((delivery) => ({
        delivery, startedAt: new Date(), durationMs: 3, statusCode: 500, error: undefined, responseBody: "", outcome: "failed" as const,
      })),
      { ...testDeliveryPolicy, retryScheduleMs: [60_000, 60_000, 60_000] },
    );
  }));
  return org;
};

describe("HistoryPartitions", () => {
  it("drops the partitions past the retention whole, the three tables' together, and keeps every younger row", async () => {
    const old = await organizationWithTriedDeliveries("Old Caterers", 3);
    const recent = await organizationWithTriedDeliveries("Recent Caterers", 2);
    expect(await countsOf(old.id)).toEqual({ messages: 3, deliveries: 3, attempts: 3 });
    await backdateHistory(db.url, "m.organization_id = $1", [old.id], "now() - interval '10 days'");
    const before = await partitionNames();

    const dropped = await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 2 * DAY_MS)));

    // A day each, made back to 10 days ago by the backdating: those ending before now - 2 days go.
    expect(dropped).toBeGreaterThanOrEqual(7);
    expect(await countsOf(old.id)).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
    expect(await countsOf(recent.id)).toEqual({ messages: 2, deliveries: 2, attempts: 2 });
    const after = await partitionNames();
    expect(before.length - after.length).toBe(3 * dropped);
    // Only partitions ending before the cut-off went: the ones of the last two days are there.
    const left = await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)));
    const [now] = await rows<{ now: Date }>("select now() as now");
    expect(left[0]!.to.getTime()).toBeGreaterThan(new Date(now!.now).getTime() - 2 * DAY_MS);
    expect(await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 2 * DAY_MS)))).toBe(0);
  });

  it("settles a dead endpoint's pending deliveries when their history reaches the retention: replayable until the partition goes, the rest untouched", async () => {
    const dead = await organizationWithTriedDeliveries("Dead Endpoint Caterers", 2);
    const healthy = await organizationWithTriedDeliveries("Healthy Caterers", 2);
    await backdateHistory(db.url, "m.organization_id = $1", [dead.id], "now() - interval '3 days'");
    const statuses = (organizationId: number) =>
      rows<{ status: string; settled_reason: string | null }>(
        "select status, settled_reason from webhook_deliveries where organization_id = ? order by id", [organizationId]);

    // The partition holding them began before now - 2 days, and ends after it: settled, not dropped.
    const settled = await db.run(HistoryPartitions.use((h) => h.settleExpiring(2 * DAY_MS, 100)));
    expect(settled).toBe(2);
    expect(await statuses(dead.id)).toEqual([
      { status: "failed", settled_reason: SETTLED_HISTORY_EXPIRED }, { status: "failed", settled_reason: SETTLED_HISTORY_EXPIRED },
    ]);
    expect((await statuses(healthy.id)).map((d) => d.status)).toEqual(["pending", "pending"]);
    // No attempt written by settling; a second sweep finds nothing (nothing is re-read).
    expect(await countsOf(dead.id)).toEqual({ messages: 2, deliveries: 2, attempts: 2 });
    expect(await db.run(HistoryPartitions.use((h) => h.settleExpiring(2 * DAY_MS, 100)))).toBe(0);

    const [message] = await rows<{ id: string }>("select id from webhook_messages where organization_id = ? order by id limit 1", [dead.id]);
    expect(await db.run(DeliveryRepository.use((r) => r.retryMessage(dead.scope, Number(message!.id))))).toEqual({ retried: 1 });
    expect((await statuses(dead.id)).map((d) => d.status)).toEqual(["pending", "failed"]);

    // Once their partition's end is past the retention: gone, with their attempts; today's stays.
    expect(await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 2 * DAY_MS)))).toBe(1);
    expect(await countsOf(dead.id)).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
    expect(await countsOf(healthy.id)).toEqual({ messages: 2, deliveries: 2, attempts: 2 });
  });

  it("makes partitions ahead from the last one's end, once, when two processes with different widths do it at once", async () => {
    const partitions = HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY));
    await Promise.all([
      db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, 6 * 3600_000, 12 * DAY_MS))),
      db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, 3600_000, 12 * DAY_MS))),
      db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, 6 * 3600_000, 12 * DAY_MS))),
    ]);
    const made = await db.run(partitions);
    // Contiguous: each starts where the one before ends (no overlap, no gap), and they reach 12 days ahead.
    for (let i = 1; i < made.length; i++) expect(made[i]!.from.getTime()).toBe(made[i - 1]!.to.getTime());
    const [now] = await rows<{ now: Date }>("select now() as now");
    expect(made.at(-1)!.to.getTime()).toBeGreaterThanOrEqual(new Date(now!.now).getTime() + 12 * DAY_MS);
    // Every table has each partition.
    const names = await partitionNames();
    expect(names.filter((n) => n.startsWith("webhook_attempts_p")).length).toBe(made.length);
    expect(names.filter((n) => n.startsWith("webhook_deliveries_p")).length).toBe(made.length);
    expect(names.filter((n) => n.startsWith("webhook_messages_p")).length).toBe(made.length);
  });

  it("replaces partitions made wider than the width that hold no row yet (the migration's days); one holding a row keeps its bounds", async () => {
    const fresh = await createTestDatabase(inject("pgAdminUrl"));
    try {
      const [clock] = await fresh.orm.em.getConnection().execute<Array<{ now: Date }>>("select now() as now");
      const now = new Date(clock!.now).getTime();
      const endingAfterNow = async (family: typeof WEBHOOK_HISTORY) =>
        (await fresh.run(HistoryPartitions.use((h) => h.list(family)))).filter((p) => p.to.getTime() > now);
      // The migration made a day each; a 3-minute retention's processes ask for a minute each.
      expect((await endingAfterNow(WEBHOOK_HISTORY))[0]!.to.getTime() - (await endingAfterNow(WEBHOOK_HISTORY))[0]!.from.getTime()).toBe(DAY_MS);
      for (const family of [WEBHOOK_HISTORY, REQUEST_HISTORY]) {
        await fresh.run(HistoryPartitions.use((h) => h.makeAhead(family, 60_000, 2 * 3600_000)));
        const made = await endingAfterNow(family);
        expect(made.map((p) => p.to.getTime() - p.from.getTime()), family.name).toEqual(made.map(() => 60_000));
        expect(made[0]!.from.getTime(), family.name).toBeLessThanOrEqual(now);
        expect(made[0]!.from.getTime(), family.name).toBeGreaterThanOrEqual(now - 6 * 60_000);
        for (let i = 1; i < made.length; i++) expect(made[i]!.from.getTime(), family.name).toBe(made[i - 1]!.to.getTime());
      }
      // A message now lands in a minute's partition; asked for half a minute, that partition keeps its bounds and the later ones are remade.
      const org = await createOrganization(fresh, "Fresh Caterers");
      await fresh.run(Effect.gen(function* () {
        yield* (yield* WebhookEndpointRepository).add(org.scope, "https://198.51.100.9/fresh", [], generateSigningSecret());
        yield* createClient(org.scope, { name: "First" });
      }));
      const [held] = await fresh.orm.em.getConnection().execute<Array<{ created: Date }>>("select created_at as created from webhook_messages");
      await fresh.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, 30_000, 2 * 3600_000)));
      const after = await endingAfterNow(WEBHOOK_HISTORY);
      const holding = after.findIndex((p) => p.from <= new Date(held!.created) && new Date(held!.created) < p.to);
      expect(after[holding]!.to.getTime() - after[holding]!.from.getTime()).toBe(60_000);
      expect(after.slice(holding + 1).map((p) => p.to.getTime() - p.from.getTime())).toEqual(after.slice(holding + 1).map(() => 30_000));
      for (let i = 1; i < after.length; i++) expect(after[i]!.from.getTime()).toBe(after[i - 1]!.to.getTime());
      const [count] = await fresh.orm.em.getConnection().execute<Array<{ n: number }>>("select count(*)::int as n from webhook_messages");
      expect(count!.n).toBe(1);
    } finally {
      await fresh.dispose();
    }
  });

  it("makes each partition beside its table and attaches it: it takes rows with the parent's ids, indexes, trigger and fillfactor", async () => {
    await db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, DAY_MS, 20 * DAY_MS)));
    const org = await organizationWithTriedDeliveries("Attached Caterers", 1);
    // Moved 15 days ahead: into partitions made by `makeAhead` (attached), not by the migration.
    await backdateHistory(db.url, "m.organization_id = $1", [org.id], "m.created_at + interval '15 days'");
    const [moved] = await rows<{ messages: string[]; deliveries: string[]; attempts: string[] }>(
      `select array(select tableoid::regclass::text from webhook_messages where organization_id = ?) as messages,
         array(select tableoid::regclass::text from webhook_deliveries where organization_id = ?) as deliveries,
         array(select tableoid::regclass::text from webhook_attempts where organization_id = ?) as attempts`,
      [org.id, org.id, org.id],
    );
    const partitionsOf = (table: string) =>
      rows<{ name: string; indexes: number; triggers: number; options: string[] | null }>(
        `select c.relname as name, (select count(*)::int from pg_index x where x.indrelid = c.oid) as indexes,
           (select count(*)::int from pg_trigger g where g.tgrelid = c.oid) as triggers, c.reloptions as options
         from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass order by c.relname`,
        [table],
      );
    for (const [table, names] of [["webhook_messages", moved!.messages], ["webhook_deliveries", moved!.deliveries], ["webhook_attempts", moved!.attempts]] as const) {
      const partitions = await partitionsOf(table);
      const [target] = partitions.filter((p) => names.includes(p.name));
      expect(names.length, table).toBe(1);
      // Every partition has the same indexes and triggers, whether the migration or makeAhead made it.
      expect(new Set(partitions.map((p) => `${p.indexes}/${p.triggers}`)).size, table).toBe(1);
      expect(target!.options, table).toEqual(table === "webhook_deliveries" ? ["fillfactor=50"] : null);
    }
    // A new message's id continues the parent's identity there too.
    const [before] = await rows<{ id: string }>("select max(id)::text as id from webhook_messages");
    const [inserted] = await rows<{ id: string }>(
      `insert into webhook_messages (organization_id, type, payload, created_at)
       values (?, 'client.created', '{}'::jsonb, now() + interval '16 days') returning id::text as id`,
      [org.id],
    );
    expect(BigInt(inserted!.id)).toBeGreaterThan(BigInt(before!.id));
  });

  it("makes partitions while a transaction that read the history is still open (attaching does not wait for readers)", async () => {
    const reader = await db.rawClient();
    try {
      await reader.query("begin");
      await reader.query("select count(*) from webhook_messages m join webhook_deliveries d on d.message_id = m.id join webhook_attempts a on a.delivery_id = d.id");
      const before = (await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)))).length;
      // PARTITION OF would wait for the reader's lock (ACCESS EXCLUSIVE on the parent) until its lock_timeout, and fail.
      await db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, DAY_MS, 40 * DAY_MS)));
      expect((await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)))).length).toBeGreaterThan(before);
    } finally {
      await reader.query("rollback");
      await reader.end();
    }
  });

  it("forgets in one turn, batch by batch: the expiring deliveries settled, the expired partitions dropped; two processes at once each do it once", async () => {
    const dead = await organizationWithTriedDeliveries("Forgotten Caterers", 3);
    const healthy = await organizationWithTriedDeliveries("Remembered Caterers", 2);
    await backdateHistory(db.url, "m.organization_id = $1", [dead.id], "now() - interval '5 days'");
    const [now] = await rows<{ now: Date }>("select now() as now");
    const before = await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)));
    const expired = before.filter((p) => p.to.getTime() <= new Date(now!.now).getTime() - 2 * DAY_MS).length;
    expect(expired).toBeGreaterThanOrEqual(3);

    // Batches of one: three deliveries take several statements each way.
    const turns = await Promise.all([
      db.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, 2 * DAY_MS, 1))),
      db.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, 2 * DAY_MS, 1))),
    ]);

    expect(turns.reduce((sum, turn) => sum + turn.settled, 0)).toBe(3);
    expect(turns.reduce((sum, turn) => sum + turn.dropped, 0)).toBe(expired);
    expect(await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)))).toHaveLength(before.length - expired);
    expect(await countsOf(dead.id)).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
    expect(await countsOf(healthy.id)).toEqual({ messages: 2, deliveries: 2, attempts: 2 });
    expect(await db.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, 2 * DAY_MS, 1)))).toEqual({ settled: 0, dropped: 0 });
  });

  it("sends a delivery made at its partition's last instant while it is younger than the retention, though the partition began before it; settles it only once it is older", async () => {
    // A database of its own: each turn's counts are this test's alone.
    const fresh = await createTestDatabase(inject("pgAdminUrl"));
    try {
      const freshRows = <Row>(text: string, values: unknown[] = []) => fresh.orm.em.getConnection().execute<Row[]>(text, values);
      const org = await createOrganization(fresh, "Late Caterers");
      await fresh.run(Effect.gen(function* () {
        yield* (yield* WebhookEndpointRepository).add(org.scope, `https://198.51.100.9/${org.id}`, [], generateSigningSecret());
        yield* createClient(org.scope, { name: "Earlier" });
        yield* createClient(org.scope, { name: "Last" });
      }));
      const [earlier, last] = await freshRows<{ id: string }>("select id::text as id from webhook_messages where organization_id = ? order by id", [org.id]);
      // The partition: the day (UTC) that ended at least 30 minutes ago, ending at `upper`. A retention reaching to 10
      // minutes before its end is then shorter than the partition (but near midnight), as the soak's 10 s against a
      // minute's width, and one 20 minutes shorter still passes its end. One message 20 minutes before that end, the
      // other at its last instant (times are kept to the millisecond): with their deliveries, not yet tried.
      const [bound] = await freshRows<{ upper: Date }>("select date_trunc('day', (now() - interval '30 minutes') at time zone 'UTC') at time zone 'UTC' as upper");
      const upper = new Date(bound!.upper).getTime();
      await backdateHistory(fresh.url, "m.id = $1", [earlier!.id, new Date(upper - 20 * 60_000).toISOString()], "$2::timestamptz");
      await backdateHistory(fresh.url, "m.id = $1", [last!.id, new Date(upper - 1).toISOString()], "$2::timestamptz");
      expect(await fresh.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)))).toContainEqual({ from: new Date(upper - DAY_MS), to: new Date(upper) });
      const deliveries = () =>
        freshRows<{ message_id: string; status: string; settled_reason: string | null; attempts: number }>(
          `select d.message_id::text as message_id, d.status, d.settled_reason,
             (select count(*)::int from webhook_attempts a where a.delivery_id = d.id) as attempts
           from webhook_deliveries d where d.organization_id = ? order by d.message_id`, [org.id]);

      // The retention reaches to 10 minutes before the partition's end: the partition's start is older than it (by a day),
      // so is the earlier delivery (by 10 minutes), the last one is younger (by 10 minutes). Only the earlier one is settled.
      const [clock] = await freshRows<{ now: Date }>("select now() as now");
      const retentionMs = new Date(clock!.now).getTime() - upper + 10 * 60_000;
      expect(await fresh.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, retentionMs, 100)))).toEqual({ settled: 1, dropped: 0 });
      expect(await deliveries()).toEqual([
        { message_id: earlier!.id, status: "failed", settled_reason: SETTLED_HISTORY_EXPIRED, attempts: 0 },
        { message_id: last!.id, status: "pending", settled_reason: null, attempts: 0 },
      ]);

      // The last one is sent: claimed, tried (its receiver answered 500), and pending for its retry.
      const sent = await fresh.run(Effect.gen(function* () {
        const queue = yield* DeliveryQueue;
        const { due } = yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld);
        yield* queue.recordAttempts(
          due.map((delivery) => ({
            delivery, startedAt: new Date(), durationMs: 3, statusCode: 500, error: undefined, responseBody: "", outcome: "failed" as const,
          })),
          { ...testDeliveryPolicy, retryScheduleMs: [60_000, 60_000, 60_000] },
        );
        return due;
      }));
      expect(sent.map((d) => [d.organizationId, new Date(d.createdAt).getTime()])).toEqual([[org.id, upper - 1]]);
      expect((await deliveries())[1]).toEqual({ message_id: last!.id, status: "pending", settled_reason: null, attempts: 1 });
      // A second turn at the same retention settles nothing more.
      expect(await fresh.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, retentionMs, 100)))).toEqual({ settled: 0, dropped: 0 });

      // 20 minutes on (the retention 20 minutes shorter against the same rows), the last delivery is older than the
      // retention, and so is its partition's end: the turn settles it (the only one pending), then drops the partition.
      expect(await fresh.run(HistoryPartitions.use((h) => h.forgetExpired(WEBHOOK_HISTORY, retentionMs - 20 * 60_000, 100))))
        .toEqual({ settled: 1, dropped: 1 });
      expect(await deliveries()).toEqual([]);
    } finally {
      await fresh.dispose();
    }
  });

  it("refuses a row no partition takes as the database being unavailable (503), never a defect", async () => {
    const org = await createOrganization(db, "Far Future Caterers");
    const failure = await db.run(Effect.flip(Database.use((d) =>
      d.rows("insert into webhook_messages (organization_id, type, payload, created_at) values (?, 'client.created', '{}', now() + interval '400 days')", [org.id]))));
    expect(failure).toBeInstanceOf(DatabaseUnavailable);
  });
});
