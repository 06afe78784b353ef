import { generateSigningSecret } from "@platter/domain";
import { createOrganization, createTestDatabase, nothingHeld, type TestDatabase, testDeliveryPolicy } from "@platter/testing";
import { Effect } from "effect";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createClient } from "./created-records.ts";

/**
 * An endpoint's throttle in the claim: a token bucket on the endpoint's row (one second's
 * deliveries when full), spent by the claim for what it leases, held by one claim at a time, and
 * waited for by the idle dispatcher's look ahead. Every time here is the database's; no test waits
 * for a token to come back (that is `apps/dispatcher/test/endpoint-throttle.test.ts`, at the receiver).
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** Settles every pending delivery, so each test starts from an empty queue. */
beforeEach(() => rows("update webhook_deliveries set status = 'succeeded', completed_at = now(), lease_token = null, lease_expires_at = null where status = 'pending'"));

/** An organization with a throttled and an unthrottled endpoint, and `count` messages for each. */
const organizationWith = async (name: string, throttle: number, count: number) => {
  const org = await createOrganization(db, name);
  const add = (i: number) => db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://${name.toLowerCase()}-${i}.example/hook`, [], generateSigningSecret())));
  const throttled = (await add(0)).id;
  const free = (await add(1)).id;
  await db.run(WebhookEndpointRepository.use((r) => r.setThrottle(org.scope, throttled, throttle)));
  for (let i = 0; i < count; i++) await db.run(createClient(org.scope, { name: `Client ${i}` }));
  return { org, throttled, free };
};

/** One claim of up to `limit` (each endpoint's cap 16), counted per endpoint. */
const claimCounts = async (limit = 100) => {
  const { due } = await db.run(DeliveryQueue.use((q) => q.claimDue(limit, 60_000, testDeliveryPolicy, { ...nothingHeld, share: 16 })));
  const counts = new Map<number, number>();
  for (const delivery of due) counts.set(delivery.endpointId, (counts.get(delivery.endpointId) ?? 0) + 1);
  return counts;
};

const bucketOf = async (id: number) =>
  (await rows<{ spent_ms: number | null }>(
    "select (extract(epoch from throttle_next_at - now()) * 1000)::float8 as spent_ms from webhook_endpoints where id = ?", [id],
  ))[0]!.spent_ms;

describe("an endpoint's throttle in the claim", () => {
  it("leases no more than its bucket's tokens (one second's deliveries when full) and spends them; the organization's other endpoint takes its cap", async () => {
    const { throttled, free } = await organizationWith("Bucket", 5, 30);
    const counts = await claimCounts();
    expect(counts.get(throttled)).toBe(5);
    expect(counts.get(free)).toBe(16);
    // Five deliveries at 5 a second: the bucket's arrival time moved a second ahead of the claim's now().
    expect(await bucketOf(throttled)).toBeGreaterThan(0);
    expect(await bucketOf(throttled)).toBeLessThanOrEqual(1000);
    expect(await bucketOf(free)).toBeNull();
  });

  it("leaves an endpoint with an empty bucket out, and the idle dispatcher's look ahead waits for its next token", async () => {
    const { org, throttled, free } = await organizationWith("Empty", 5, 10);
    await rows("update webhook_endpoints set throttle_next_at = now() + interval '1 hour' where id = ?", [throttled]);
    const counts = await claimCounts();
    expect(counts.get(throttled)).toBeUndefined();
    expect(counts.get(free)).toBe(10);
    await rows("update webhook_deliveries set status = 'succeeded', completed_at = now(), lease_token = null, lease_expires_at = null where endpoint_id = ?", [free]);
    // A token comes back four fifths of a second before the arrival time (a full bucket holds five).
    const waitMs = await db.run(DeliveryQueue.use((q) => q.nextDueInMs(testDeliveryPolicy)));
    expect(waitMs).toBeGreaterThan(3_598_000);
    expect(waitMs).toBeLessThanOrEqual(3_599_200);
    // No throttle: the whole cap again, and the bucket forgotten.
    await db.run(WebhookEndpointRepository.use((r) => r.setThrottle(org.scope, throttled, null)));
    expect((await claimCounts()).get(throttled)).toBe(10);
    expect(await bucketOf(throttled)).toBeNull();
  });

  it("leaves a throttled endpoint whose row another transaction holds to that one, and claims the rest", async () => {
    const { throttled, free } = await organizationWith("Held", 5, 10);
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query("select id from webhook_endpoints where id = $1 for no key update", [throttled]);
      const counts = await claimCounts();
      expect(counts.get(throttled)).toBeUndefined();
      expect(counts.get(free)).toBe(10);
      await other.query("rollback");
    } finally {
      await other.end();
    }
    expect((await claimCounts()).get(throttled)).toBe(5);
  });

  it("changes nothing for another organization's endpoint, and reports the throttle before", async () => {
    const { org, throttled } = await organizationWith("Before", 5, 0);
    expect(await db.run(WebhookEndpointRepository.use((r) => r.setThrottle(org.scope, throttled, 7)))).toEqual({ id: throttled, before: 5, after: 7, changed: true });
    expect(await db.run(WebhookEndpointRepository.use((r) => r.setThrottle(org.scope, throttled, 7)))).toEqual({ id: throttled, before: 7, after: 7, changed: false });
    expect((await db.run(WebhookEndpointRepository.use((r) => r.find(org.scope, throttled)))).throttle_per_second).toBe(7);
    const stranger = await createOrganization(db, "Stranger");
    const refused = await db.run(Effect.flip(WebhookEndpointRepository.use((r) => r.setThrottle(stranger.scope, throttled, null))));
    expect(refused._tag).toBe("NotFound");
    expect((await db.run(WebhookEndpointRepository.use((r) => r.find(org.scope, throttled)))).throttle_per_second).toBe(7);
  });
});
