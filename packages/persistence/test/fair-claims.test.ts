import { type AttemptOutcome, type DeliveryPolicy, type DueDelivery, generateSigningSecret, originShare } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase, nothingHeld, retryingDeliveryPolicy, testDeliveryPolicy } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * How claims share the queue: each endpoint's cap on attempts in flight, organizations and their
 * endpoints taking turns, and the circuit that stops sending to an endpoint that keeps failing.
 * Every time here is the database's, as for the dispatchers.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/**
 * An organization with `endpoints` endpoints subscribed to everything (each on an origin of its own,
 * or at `url(i)`), and `count` messages (one delivery per endpoint each).
 */
const organizationWith = async (
  name: string, endpoints: number, count: number, url = (i: number) => `https://${name.toLowerCase()}-${i}.example/hook`,
) => {
  const org = await createOrganization(db, name);
  const ids: number[] = [];
  for (let i = 0; i < endpoints; i++) {
    ids.push((await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url(i), [], generateSigningSecret())))).id);
  }
  for (let i = 0; i < count; i++) await db.run(createClient(org.scope, { name: `Client ${i}` }));
  return { org, endpoints: ids };
};

const result = (delivery: DueDelivery, outcome: AttemptOutcome) => ({
  delivery, startedAt: new Date(), durationMs: 3, statusCode: outcome === "succeeded" ? 200 : 500, error: undefined,
  responseBody: "", outcome,
});

/**
 * One dispatcher's bookkeeping, as WebhookDispatcher keeps it: what it claimed is in flight until
 * its result is recorded. `share` is its share of each endpoint's cap.
 */
const dispatcher = (policy: DeliveryPolicy, share: number, organizationShare = 1000, originConnections = 1000) => {
  const held = {
    share, inFlight: new Map<number, number>(), organizationShare, inFlightByOrganization: new Map<number, number>(),
    originConnections, inFlightByOrigin: new Map<string, number>(), originShare: originShare(originConnections),
  };
  const add = <Key>(counts: Map<Key, number>, key: Key, by: number) => counts.set(key, (counts.get(key) ?? 0) + by);
  const count = (delivery: DueDelivery, by: number) => {
    add(held.inFlight, delivery.endpointId, by);
    add(held.inFlightByOrganization, delivery.organizationId, by);
    add(held.inFlightByOrigin, delivery.origin, by);
  };
  return {
    claim: (limit: number) =>
      Effect.map(DeliveryQueue.use((q) => q.claimDue(limit, 60_000, policy, held)), ({ due }) => {
        for (const delivery of due) count(delivery, 1);
        return due;
      }),
    record: (results: ReadonlyArray<ReturnType<typeof result>>) =>
      Effect.map(DeliveryQueue.use((q) => q.recordAttempts(results, policy)), () => {
        for (const r of results) count(r.delivery, -1);
      }),
  };
};

/** Settles every pending delivery, so each test starts from an empty queue. */
const settleEverything = () =>
  rows("update webhook_deliveries set status = 'succeeded', completed_at = now(), lease_token = null, lease_expires_at = null where status = 'pending'");

describe("claims", () => {
  it("never put more than the cap in flight at one endpoint, and skip it while it is at the cap", async () => {
    const { endpoints: [endpoint] } = await organizationWith("Capped", 1, 10);
    const one = dispatcher(testDeliveryPolicy, 4);
    const { first, second, third } = await db.run(
      Effect.gen(function* () {
        const first = yield* one.claim(100);
        const second = yield* one.claim(100);
        yield* one.record(first.slice(0, 3).map((d) => result(d, "succeeded")));
        const third = yield* one.claim(100);
        return { first, second, third };
      }),
    );
    expect(first.map((d) => d.endpointId)).toEqual([endpoint, endpoint, endpoint, endpoint]);
    expect(second).toEqual([]);
    expect(third).toHaveLength(3);
    await settleEverything();
  });

  it("never put more than an organization's share in flight, and serve the organization holding fewer first", async () => {
    const busy = await organizationWith("Busy", 4, 10); // 40 deliveries on 4 endpoints, created first
    const one = dispatcher(testDeliveryPolicy, 10, 12);
    const { first, second } = await db.run(Effect.gen(function* () {
      const first = yield* one.claim(100);
      return { first, second: yield* one.claim(100) };
    }));
    // At its share of 12 the organization gets nothing more, though its endpoints have free slots.
    expect(first).toHaveLength(12);
    expect(new Set(first.map((d) => d.organizationId))).toEqual(new Set([busy.org.id]));
    expect(second).toEqual([]);

    // Another organization arrives: the busy one holds 12, the newcomer none, so the newcomer takes
    // every slot a small claim has, and the busy one still gets nothing beyond its share.
    const newcomer = await organizationWith("Newcomer", 1, 3);
    const third = await db.run(one.claim(2));
    expect(third.map((d) => d.organizationId)).toEqual([newcomer.org.id, newcomer.org.id]);

    // A result frees one of the busy organization's slots: it may claim one more, no more.
    await db.run(one.record([result(first[0]!, "succeeded")]));
    const fourth = await db.run(one.claim(100));
    expect(fourth.filter((d) => d.organizationId === busy.org.id)).toHaveLength(1);
    expect(fourth.filter((d) => d.organizationId === newcomer.org.id)).toHaveLength(1);
    await settleEverything();
  });

  it("never take more of an origin's deliveries than the connections to it, however it is spelled, and let organizations take turns there", async () => {
    const busy = await organizationWith("Busy on shared", 4, 10, (i) => `https://hooks.shared.example/busy-${i}`);
    // The same origin spelled otherwise: upper case, the default port written out.
    const quiet = await organizationWith("Quiet on shared", 1, 5, () => "https://HOOKS.Shared.example:443/quiet");
    const elsewhere = await organizationWith("Elsewhere", 1, 3, () => "https://elsewhere.example/hook");
    const one = dispatcher(testDeliveryPolicy, 10, 1000, 6);
    const [first, second] = await db.run(Effect.all([one.claim(100), one.claim(100)]));
    const of = (claimed: DueDelivery[], org: OrganizationFixture) => claimed.filter((d) => d.organizationId === org.id).length;
    // Six connections to the shared origin, taken in turns by the two organizations there; the other origin is not held back.
    expect(new Set(first.filter((d) => d.organizationId !== elsewhere.org.id).map((d) => d.origin))).toEqual(new Set(["https://hooks.shared.example"]));
    expect([of(first, busy.org), of(first, quiet.org), of(first, elsewhere.org)]).toEqual([3, 3, 3]);
    expect(second).toEqual([]);
    // A freed connection goes to the organization holding fewer there: one more, no more.
    await db.run(one.record([result(first.find((d) => d.organizationId === quiet.org.id)!, "succeeded")]));
    const third = await db.run(one.claim(100));
    expect(third.map((d) => d.organizationId)).toEqual([quiet.org.id]);
    await settleEverything();
  });

  it("keep a quarter of an origin's connections for the other organizations there", async () => {
    const hoarder = await organizationWith("Hoarder on shared", 4, 10, (i) => `https://hooks.common.example/hoarder-${i}`);
    const one = dispatcher(testDeliveryPolicy, 10, 1000, 8);
    const first = await db.run(one.claim(100));
    // 6 of the origin's 8 connections, though its endpoints and the dispatcher have room for more.
    expect(first.map((d) => d.organizationId)).toEqual(Array(6).fill(hoarder.org.id));
    expect(await db.run(one.claim(100))).toEqual([]);
    const latecomer = await organizationWith("Latecomer on shared", 1, 5, () => "https://hooks.common.example/latecomer");
    const second = await db.run(one.claim(100));
    expect(second.map((d) => d.organizationId)).toEqual([latecomer.org.id, latecomer.org.id]);
    await settleEverything();
  });

  it("fill every slot they can when organizations have uneven room", async () => {
    const nearlyFull = await organizationWith("NearlyFull", 1, 10);
    const roomy = await organizationWith("Roomy", 1, 10);
    const alsoRoomy = await organizationWith("AlsoRoomy", 1, 10);
    const one = dispatcher(testDeliveryPolicy, 4);
    // The first organization takes 3 of its endpoint's 4, alone in the queue for a moment.
    await rows("update webhook_deliveries set next_attempt_at = now() + interval '1 hour' where organization_id <> ?", [nearlyFull.org.id]);
    expect(await db.run(one.claim(3))).toHaveLength(3);
    await rows("update webhook_deliveries set next_attempt_at = now() - interval '1 minute' where status = 'pending' and lease_token is null");
    // Room for 1 + 4 + 4: an equal split of 9 (3 each) would leave two slots empty.
    const claimed = await db.run(one.claim(9));
    const of = (org: OrganizationFixture) => claimed.filter((d) => d.organizationId === org.id).length;
    expect([of(nearlyFull.org), of(roomy.org), of(alsoRoomy.org)]).toEqual([1, 4, 4]);
    await settleEverything();
  });

  it("let organizations take turns, then their endpoints, whatever one of them has queued", async () => {
    const backlog = await organizationWith("Backlogged", 2, 30); // 60 deliveries, created first
    const fresh = await organizationWith("Fresh", 1, 4);
    const one = dispatcher(testDeliveryPolicy, nothingHeld.share);
    const [firstTwo, nextSix] = await db.run(Effect.all([one.claim(2), one.claim(6)]));
    // One each before anyone gets a second.
    expect(firstTwo.map((d) => d.organizationId).sort()).toEqual([backlog.org.id, fresh.org.id].sort());
    // Then half each; the backlogged organization's half split between its endpoints.
    const count = (claimed: DueDelivery[], test: (d: DueDelivery) => boolean) => claimed.filter(test).length;
    expect(count(nextSix, (d) => d.organizationId === fresh.org.id)).toBe(3);
    const [first, second] = backlog.endpoints.map((id) => count([...firstTwo, ...nextSix], (d) => d.endpointId === id));
    expect(first! + second!).toBe(4);
    expect(Math.abs(first! - second!)).toBe(0);
    await settleEverything();
  });
});

describe("the circuit", () => {
  it("opens after failures in a row, half-opens for one probe after the cooldown, and closes on a success; tries are not spent meanwhile", async () => {
    const { org, endpoints: [endpoint] } = await organizationWith("Flaky", 1, 8);
    const policy = { ...retryingDeliveryPolicy, circuitThreshold: 3, circuitCooldownMs: 30_000 };
    const { claim, record } = dispatcher(policy, 3);
    const attemptsMade = async () =>
      (await rows<{ n: number }>("select sum(attempts)::int as n from webhook_deliveries where organization_id = ?", [org.id]))[0]!.n;
    // Delivery time is the database's, which only moves forward: the cooldown passes by moving the circuit's end back.
    const cooldownPasses = (ms: number) => Effect.promise(() =>
      rows("update webhook_endpoints set circuit_open_until = circuit_open_until - ?::int * interval '1 millisecond' where id = ?", [ms, endpoint]));
    const steps = await db.run(
      Effect.gen(function* () {
        const queue = yield* DeliveryQueue;
        const stats = () => Effect.map(queue.endpointStats(), (all) => all.find((s) => s.endpointId === endpoint));
        // Three fail (retried at once): the circuit opens.
        const failing = yield* claim(100);
        yield* record(failing.map((d) => result(d, "failed")));
        const whileOpen = yield* claim(100);
        const openStats = yield* stats();
        yield* cooldownPasses(29_000);
        const stillOpen = yield* claim(100);
        yield* cooldownPasses(2_000);
        const probe = yield* claim(100);
        const besideProbe = yield* claim(100);
        const halfOpenStats = yield* stats();
        // The probe fails: open again for the cooldown.
        yield* record(probe.map((d) => result(d, "failed")));
        const reopened = yield* claim(100);
        yield* cooldownPasses(31_000);
        const secondProbe = yield* claim(100);
        yield* record(secondProbe.map((d) => result(d, "succeeded")));
        const closed = yield* claim(100);
        const closedStats = yield* stats();
        return {
          failing, whileOpen, openStats, stillOpen, probe, besideProbe, halfOpenStats, reopened, secondProbe, closed, closedStats,
        };
      }),
    );
    expect(steps.failing).toHaveLength(3);
    expect(steps.whileOpen).toEqual([]);
    expect(steps.openStats).toMatchObject({ circuit: "open", inFlight: 0, queueDepth: 8 });
    expect(steps.stillOpen).toEqual([]);
    expect(steps.probe).toHaveLength(1);
    expect(steps.besideProbe).toEqual([]);
    expect(steps.halfOpenStats).toMatchObject({ circuit: "half_open", inFlight: 1 });
    expect(steps.reopened).toEqual([]);
    expect(steps.secondProbe).toHaveLength(1);
    expect(steps.closed).toHaveLength(3);
    expect(steps.closedStats).toMatchObject({ circuit: "closed", inFlight: 3 });
    // Five results recorded (three failures, a failed probe, a successful one): five tries spent, no more.
    expect(await attemptsMade()).toBe(5);
    await settleEverything();
  });
});
