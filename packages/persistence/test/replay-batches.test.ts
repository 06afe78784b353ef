import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryRepository, HistoryPartitions, REPLAY_BATCH_SIZE, WEBHOOK_HISTORY } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * "Replay failed messages since" (`DeliveryRepository.retryFailed`) over more deliveries than one
 * batch: the same deliveries change, the count is theirs, and each batch of at most
 * `REPLAY_BATCH_SIZE` was its own transaction (PostgreSQL's `xmin` of each changed row names the
 * transaction that wrote it).
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Replay A");
  b = await createOrganization(db, "Replay B");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** A new endpoint of `organizationId` and `count` deliveries to it, one a millisecond from `start`, each with `status` as SQL over `n`. */
const seed = async (organizationId: number, count: number, start: string) => {
  const [endpoint] = await rows<{ id: string }>(
    "insert into webhook_endpoints (organization_id, url, origin, secret, event_types) values (?, 'https://hooks.example.com/replay', 'https://hooks.example.com', 'whsec_x', '{}') returning id",
    [organizationId],
  );
  // Partitions back to `start` (the history is written in the past).
  await db.run(HistoryPartitions.use((h) => h.cover(WEBHOOK_HISTORY, new Date(start), 24 * 3600_000)));
  // Of every 10: 6 failed, 2 pending waiting to retry after a failed attempt, 1 pending already due, 1 succeeded.
  await rows(
    `with m as (
       insert into webhook_messages (organization_id, type, payload, created_at)
       select ?, 'client.created', '{"version":1,"data":{}}'::jsonb, ?::timestamptz + n * interval '1 millisecond' from generate_series(0, ? - 1) n
       returning id, created_at)
     insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, attempts, next_attempt_at, created_at, completed_at)
     select ?, ?, m.id, s.status, case when s.kind = 'due' then 0 else 1 end,
       case s.kind when 'waiting' then now() + interval '1 hour' else now() - interval '1 minute' end,
       m.created_at, case when s.status <> 'pending' then m.created_at end
     from m cross join lateral (select case when m.id % 10 < 6 then 'failed' when m.id % 10 < 8 then 'waiting' when m.id % 10 = 8 then 'due' else 'succeeded' end as kind) k
     cross join lateral (select k.kind, case k.kind when 'waiting' then 'pending' when 'due' then 'pending' else k.kind end as status) s`,
    [organizationId, start, count, organizationId, endpoint!.id],
  );
  return Number(endpoint!.id);
};

const FAILING = "(status = 'failed' or (status = 'pending' and attempts > 0 and next_attempt_at > now()))";

describe("replaying an endpoint's failed messages since a time", () => {
  it("makes every failing delivery since then due again, in batches of at most 500, each its own transaction", async () => {
    const endpoint = await seed(a.id, 3000, "2026-11-20T00:00:00.000Z");
    const other = await seed(b.id, 700, "2026-11-20T00:00:00.000Z");
    const since = "2026-11-20T00:00:00.200Z";
    const expected = await rows<{ id: string }>(
      `select id from webhook_deliveries where endpoint_id = ? and ${FAILING} and created_at >= ?::timestamptz order by id`,
      [endpoint, since],
    );
    expect(expected.length).toBeGreaterThan(3 * REPLAY_BATCH_SIZE);
    const untouched = await rows<{ id: string; status: string; next_attempt_at: string; xmin: string }>(
      `select id, status, next_attempt_at::text, xmin::text from webhook_deliveries
       where endpoint_id = ? and not (${FAILING} and created_at >= ?::timestamptz) or endpoint_id = ? order by id`,
      [endpoint, since, other],
    );

    const result = await db.run(DeliveryRepository.use((r) => r.retryFailed(a.scope, endpoint, since)));

    expect(result).toEqual({ retried: expected.length });
    const changed = await rows<{ id: string; status: string; due: boolean; lease: string | null; xmin: string }>(
      `select id, status, next_attempt_at <= now() as due, lease_token as lease, xmin::text from webhook_deliveries where id in (${expected.map((row) => row.id).join(",")}) order by id`,
    );
    expect(new Set(changed.map((row) => `${row.status} ${row.due} ${row.lease}`))).toEqual(new Set(["pending true null"]));
    const perTransaction = Map.groupBy(changed, (row) => row.xmin);
    expect(perTransaction.size).toBe(Math.ceil(expected.length / REPLAY_BATCH_SIZE));
    expect(Math.max(...[...perTransaction.values()].map((batch) => batch.length))).toBe(REPLAY_BATCH_SIZE);
    // Nothing else changed: deliveries before `since`, already due, succeeded, and the other organization's.
    expect(await rows(
      `select id, status, next_attempt_at::text, xmin::text from webhook_deliveries
       where id in (${untouched.map((row) => row.id).join(",")}) order by id`,
    )).toEqual(untouched);
  });

  it("replays the whole failing history without `since`, and a second replay finds nothing left to change", async () => {
    const endpoint = await seed(a.id, 1200, "2026-11-21T00:00:00.000Z");
    const [failing] = await rows<{ n: number }>(`select count(*)::int as n from webhook_deliveries where endpoint_id = ? and ${FAILING}`, [endpoint]);
    expect(failing!.n).toBeGreaterThan(REPLAY_BATCH_SIZE);
    expect(await db.run(DeliveryRepository.use((r) => r.retryFailed(a.scope, endpoint)))).toEqual({ retried: failing!.n });
    expect(await db.run(DeliveryRepository.use((r) => r.retryFailed(a.scope, endpoint)))).toEqual({ retried: 0 });
  });

  it("refuses another organization's endpoint (NotFound) and changes nothing of it", async () => {
    const endpoint = await seed(b.id, 20, "2026-11-22T00:00:00.000Z");
    const before = await rows("select id, status, next_attempt_at::text from webhook_deliveries where endpoint_id = ? order by id", [endpoint]);
    const outcome = await db.run(DeliveryRepository.use((r) => r.retryFailed(a.scope, endpoint)).pipe(Effect.flip));
    expect(outcome._tag).toBe("NotFound");
    expect(await rows("select id, status, next_attempt_at::text from webhook_deliveries where endpoint_id = ? order by id", [endpoint])).toEqual(before);
  });
});
