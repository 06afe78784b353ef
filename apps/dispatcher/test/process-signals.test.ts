import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import {
  killLeftoverDispatchers, type Receiver, settledDeliveries, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { Events } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/** What happens to deliveries when a dispatcher process is killed outright, or asked to stop. */

let db: TestDatabase;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});

afterEach(async () => {
  await killLeftoverDispatchers();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(() => db?.dispose());

/** An organization with one endpoint on a receiver answering 200 after `delayMs`, and `count` events created. */
const organizationWithEvents = async (count: number, delayMs: number) => {
  const target = await startReceiver(() => ({ status: 200, delayMs }));
  receivers.push(target);
  const org = await createOrganization(db, "Crashing Caterers");
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
  for (let i = 0; i < count; i++) await db.run(Events.create(apiKeyActor(org.scope), { name: `Event ${i}` }));
  return { org, target };
};

describe("SIGKILL mid-batch", () => {
  it("loses no delivery: once the leases run out another dispatcher delivers the rest", async () => {
    const { org, target } = await organizationWithEvents(200, 300);

    const doomed = await startDispatcherProcess(db.url, { DISPATCHER_CONCURRENCY: "20", WEBHOOK_TIMEOUT: "1s", WEBHOOK_LEASE: "2s" });
    await waitFor("the doomed dispatcher to be mid-way", () => target.received.length >= 50);
    expect(await doomed.kill()).toEqual({ code: null, signal: "SIGKILL" });
    const receivedBeforeRestart = target.received.length;

    const successor = await startDispatcherProcess(db.url, { WEBHOOK_TIMEOUT: "1s", WEBHOOK_LEASE: "2s" });
    const deliveries = await settledDeliveries(db, org.id, 200, 30_000);
    expect(deliveries.filter((d) => d.status !== "succeeded")).toEqual([]);

    const counts = target.countsByEnvelope();
    const duplicated = [...counts].filter(([, n]) => n > 1);
    console.info(
      `SIGKILL: ${receivedBeforeRestart} requests before the restart, ${target.received.length} in all ` +
        `for ${counts.size} envelopes; ${duplicated.length} envelopes received twice`,
    );
    // At least once: every envelope arrived.
    expect([...counts.keys()].sort()).toEqual(deliveries.map((d) => d.envelope_id).sort());
    // Only the killed process's unrecorded attempts repeat, once each, never overlapping, with the same bytes.
    expect(duplicated.every(([, n]) => n === 2)).toBe(true);
    expect(target.concurrentRepeats).toEqual([]);
    for (const [envelopeId] of duplicated) {
      const [a, b] = target.received.filter((r) => r.envelope.id === envelopeId);
      expect(a!.rawBody.equals(b!.rawBody)).toBe(true);
      expect(a!.headers["x-platter-signature"]).toBe(b!.headers["x-platter-signature"]);
    }
    // Every delivery ends with a recorded 200.
    for (const delivery of deliveries) expect(delivery.attempts.at(-1)!.status_code).toBe(200);

    expect((await successor.terminate()).code).toBe(0);
  });
});

describe("SIGTERM", () => {
  it("lets in-flight attempts finish, records them, and exits 0", async () => {
    const { org, target } = await organizationWithEvents(10, 1500);
    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "10s" });

    // The ten are claimed together and held by the receiver: SIGTERM arrives while all are in flight.
    await waitFor("all ten requests to be in flight", () => target.inFlight() === 10);
    const exit = await dispatcher.terminate();
    expect(exit, dispatcher.output()).toEqual({ code: 0, signal: null });

    // Recorded by the process before it exited: nothing is left pending, nothing needed a retry.
    const deliveries = await settledDeliveries(db, org.id, 10, 1000);
    for (const delivery of deliveries) {
      expect(delivery.status).toBe("succeeded");
      expect(delivery.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([[1, 200, null]]);
    }
    expect(target.received).toHaveLength(10);
  });
});
