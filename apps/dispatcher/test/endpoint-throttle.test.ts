import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, metricValue, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";

/**
 * An endpoint's throttle across two real dispatcher processes: with 5 a second and 1,000
 * deliveries queued, its receiver sees 5 a second (± 10 %, counted at the receiver over a window
 * of 60 arrivals), and the organization's other endpoint, with as many queued, is not held back by
 * it. The rate is the one timing this test asserts: it is the promise the throttle makes.
 */

const QUEUED = 1_000;
const PER_SECOND = 5;
/** Arrivals the rate is measured over: twelve seconds at 5 a second. */
const WINDOW = 60;

let db: TestDatabase;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});

afterAll(async () => {
  await killLeftoverDispatchers();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dispose();
});

/** `count` client.created messages committed in one statement, each with a delivery to every endpoint of the organization (as `recordMessage` writes them). */
const enqueue = (organizationId: number, count: number) =>
  sql(db, `with m as (
      insert into webhook_messages (organization_id, type, payload)
      select ?::bigint, 'client.created', jsonb_build_object('version', 1, 'data', jsonb_build_object('id', n, 'name', 'Client ' || n,
        'email', null, 'phone', null, 'company', null, 'created_at', '2026-11-23T08:00:00.000Z'))
      from generate_series(1, ?::int) n returning id, organization_id
    )
    insert into webhook_deliveries (organization_id, endpoint_id, message_id)
    select m.organization_id, e.id, m.id from m join webhook_endpoints e on e.organization_id = m.organization_id`, [organizationId, count]);

const attemptsOf = async (opsUrl: string) =>
  metricValue(await (await fetch(`${opsUrl}/metrics`)).text(), 'platter_webhook_attempts_total{outcome="succeeded"}') ?? 0;

describe("an endpoint's throttle", () => {
  it(`holds its receiver to ${PER_SECOND} a second across two dispatchers with ${QUEUED} queued; the organization's other endpoint is not held back`, async () => {
    const throttledReceiver = await startReceiver();
    const freeReceiver = await startReceiver();
    receivers.push(throttledReceiver, freeReceiver);
    const org = await createOrganization(db, "Small Caterer");
    const add = (url: string) => db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
    const throttled = await add(throttledReceiver.url);
    await add(freeReceiver.url);
    await db.run(WebhookEndpointRepository.use((r) => r.setThrottle(org.scope, throttled.id, PER_SECOND)));

    // A production-like lease, so no delivery is sent twice on a loaded machine.
    const settings = { WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "35s" };
    const dispatchers = await Promise.all([startDispatcherProcess(db.url, settings), startDispatcherProcess(db.url, settings)]);
    await enqueue(org.id, QUEUED);

    // The other endpoint gets all its deliveries while the throttled one has had a fraction of its own.
    await waitFor("the other endpoint's deliveries", () => freeReceiver.received.length >= QUEUED, 120_000);
    const throttledMeanwhile = throttledReceiver.received.length;
    console.info(`throttle: the other endpoint received ${QUEUED} while the throttled one received ${throttledMeanwhile}`);
    expect(throttledMeanwhile).toBeLessThan(QUEUED / 5);

    // The throttled receiver's rate, from one arrival to the one WINDOW later (bounded wait).
    const first = throttledReceiver.received.length;
    const attemptsBefore = await Promise.all(dispatchers.map((d) => attemptsOf(d.opsUrl)));
    await waitFor(`${WINDOW} more deliveries at the throttled endpoint`, () => throttledReceiver.received.length > first + WINDOW, 60_000);
    const attemptsAfter = await Promise.all(dispatchers.map((d) => attemptsOf(d.opsUrl)));
    const from = throttledReceiver.received[first]!.receivedAt;
    const to = throttledReceiver.received[first + WINDOW]!.receivedAt;
    const rate = (WINDOW * 1000) / (to - from);
    const split = attemptsAfter.map((after, i) => after - attemptsBefore[i]!);
    console.info(`throttle: ${rate.toFixed(2)} deliveries/s at the throttled receiver over ${WINDOW} arrivals; attempts per dispatcher meanwhile ${split.join(" + ")}`);
    expect(rate).toBeGreaterThanOrEqual(PER_SECOND * 0.9);
    expect(rate).toBeLessThanOrEqual(PER_SECOND * 1.1);
    expect(throttledReceiver.concurrentRepeats).toEqual([]);
    expect(throttledReceiver.countsByEnvelope().size).toBe(throttledReceiver.received.length);

    const exits = await Promise.all(dispatchers.map((d) => d.terminate()));
    expect(exits.map((e) => e.code)).toEqual([0, 0]);
    // What was not sent stays queued for later.
    const [pending] = await sql<{ n: number }>(db, "select count(*)::int as n from webhook_deliveries where status = 'pending' and endpoint_id = ?", [throttled.id]);
    expect(pending!.n).toBe(QUEUED - throttledReceiver.received.length);
  });
});
