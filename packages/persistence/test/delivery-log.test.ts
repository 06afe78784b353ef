import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryRepository, type DeliveryLogEntry } from "../src/index.ts";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { type DeliveryLogFilter, deliveryLogListing, parsePageRequest } from "@platter/domain";
import { Result } from "effect";

/**
 * The delivery log as the Developer area reads it: newest first, keyset pages that walk every
 * delivery once, each filter, a message with every attempt, and the replays.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Log A");
  b = await createOrganization(db, "Log B");
  await db.run(Effect.gen(function* () {
    yield* Seeding.deliveryLog(a.scope, { deliveries: 301, endpoints: 3 });
    yield* Seeding.deliveryLog(b.scope, { deliveries: 50, endpoints: 1 });
  }));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** Every delivery of the log under `filter`, page by page of `limit`. */
const walk = async (filter: DeliveryLogFilter, limit: number): Promise<{ entries: DeliveryLogEntry[]; pages: number }> => {
  const entries: DeliveryLogEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = Result.getOrThrow(parsePageRequest(deliveryLogListing, { limit: String(limit), ...(cursor === undefined ? {} : { cursor }) }));
    const read = await db.run(DeliveryRepository.use((r) => r.log(a.scope, filter, page)));
    entries.push(...read.data);
    cursor = read.next_cursor ?? undefined;
    pages += 1;
  } while (cursor !== undefined);
  return { entries, pages };
};

/** A's delivery ids in the log's order (created_at, id descending), by SQL. */
const expectedIds = (where = "true", params: unknown[] = []) =>
  rows<{ id: string }>(
    `select d.id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
     where d.organization_id = ? and ${where} order by d.created_at desc, d.id desc`,
    [a.id, ...params],
  ).then((found) => found.map((row) => Number(row.id)));

describe("the delivery log", () => {
  it("walks every delivery of the organization once, newest first, page by page", async () => {
    const { entries, pages } = await walk({}, 50);
    expect(entries.map((entry) => entry.id)).toEqual(await expectedIds());
    expect(entries).toHaveLength(301);
    expect(pages).toBe(7);
    expect(entries[0]).toMatchObject({
      envelope_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), endpoint_url: expect.stringMatching(/^https:\/\/hooks\.example\.com\//),
      attempts: expect.any(Number), created_at: expect.stringMatching(/Z$/),
    });
  });

  it.each<[string, DeliveryLogFilter, string, (ids: { endpoint: number }) => unknown[]]>([
    ["status", { status: "failed" }, "d.status = 'failed'", () => []],
    ["event type", { eventType: "invoice.paid" }, "m.type = 'invoice.paid'", () => []],
    ["endpoint", {}, "d.endpoint_id = ?", ({ endpoint }) => [endpoint]],
    ["time", { from: "", to: "" }, "d.created_at >= ?::timestamptz and d.created_at < ?::timestamptz", () => []],
  ])("filters by %s", async (name, given, where, params) => {
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ? order by id limit 1", [a.id]);
    const [middle] = await rows<{ from: string; to: string }>(
      `select to_char((min(created_at) + (max(created_at) - min(created_at)) / 3) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as from,
              to_char((min(created_at) + (max(created_at) - min(created_at)) / 2) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as to
       from webhook_deliveries where organization_id = ?`,
      [a.id],
    );
    const filter: DeliveryLogFilter = name === "endpoint" ? { endpointId: Number(endpoint!.id) } : name === "time" ? { from: middle!.from, to: middle!.to } : given;
    const bound = name === "time" ? [middle!.from, middle!.to] : params({ endpoint: Number(endpoint!.id) });
    const expected = await expectedIds(where, bound);
    const { entries } = await walk(filter, 20);
    expect(expected.length).toBeGreaterThan(0);
    expect(entries.map((entry) => entry.id)).toEqual(expected);
  });

  it("reads a message with its deliveries and every attempt, response bodies as stored; another organization's is NotFound", async () => {
    const [failed] = await rows<{ envelope_id: string; message_id: string }>(
      `select m.envelope_id, d.message_id from webhook_deliveries d join webhook_messages m on m.id = d.message_id
       where d.organization_id = ? and d.status = 'failed' order by d.id limit 1`,
      [a.id],
    );
    const message = await db.run(DeliveryRepository.use((r) => r.message(a.scope, failed!.envelope_id)));
    expect(message).toMatchObject({ id: Number(failed!.message_id), envelope_id: failed!.envelope_id, payload: { version: 1 } });
    expect(message.deliveries).toHaveLength(3);
    const failedDelivery = message.deliveries.find((delivery) => delivery.status === "failed")!;
    expect(failedDelivery.attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([
      [1, 500, null], [2, null, "connect ECONNREFUSED 203.0.113.7:443"], [3, 500, null],
    ]);
    expect(failedDelivery.attempts[0]!.response_body).toContain("<h1>Internal Server Error</h1>");
    await expect(db.run(DeliveryRepository.use((r) => r.message(b.scope, failed!.envelope_id)))).rejects.toMatchObject({ _tag: "NotFound" });
  });
});

describe("replays", () => {
  it("make every finished delivery of a message due again, leaving pending ones alone", async () => {
    const [message] = await rows<{ message_id: string; finished: number }>(
      `select message_id, count(*) filter (where status <> 'pending')::int as finished from webhook_deliveries
       where organization_id = ? group by message_id having count(*) filter (where status = 'failed') > 0 order by message_id limit 1`,
      [a.id],
    );
    const result = await db.run(DeliveryRepository.use((r) => r.retryMessage(a.scope, Number(message!.message_id))));
    expect(result).toEqual({ retried: message!.finished });
    expect(await rows("select distinct status from webhook_deliveries where message_id = ?", [message!.message_id])).toEqual([{ status: "pending" }]);
  });

  it("make an endpoint's failed deliveries made since a time due again, and no others", async () => {
    const [endpoint] = await rows<{ id: string }>(
      "select endpoint_id as id from webhook_deliveries where organization_id = ? and status = 'failed' group by endpoint_id order by count(*) desc limit 1",
      [a.id],
    );
    const failed = await rows<{ id: string; created_at: string }>(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at from webhook_deliveries
       where endpoint_id = ? and status = 'failed' order by created_at, id`,
      [endpoint!.id],
    );
    expect(failed.length).toBeGreaterThan(1);
    const since = failed[1]!.created_at;
    const later = failed.filter((row) => row.created_at >= since).map((row) => Number(row.id));
    const result = await db.run(DeliveryRepository.use((r) => r.retryFailed(a.scope, Number(endpoint!.id), since)));
    expect(result).toEqual({ retried: later.length });
    const still = await rows<{ id: string }>("select id from webhook_deliveries where endpoint_id = ? and status = 'failed' order by created_at, id", [endpoint!.id]);
    expect(still.map((row) => Number(row.id))).toEqual(failed.filter((row) => row.created_at < since).map((row) => Number(row.id)));
  });
});
