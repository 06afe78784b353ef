import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { deliveriesOf, killLeftoverDispatchers, type Receiver, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * A dispatcher killed mid-attempt does not use up one of the delivery's tries: a try counts once
 * its result is known. With two tries allowed, a delivery whose first attempt died with its
 * dispatcher, whose next attempt failed and whose last one succeeded is delivered, with the two
 * tries that had a result recorded as attempts 1 and 2.
 */

let db: TestDatabase;
let target: Receiver;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(async () => {
  await killLeftoverDispatchers();
  await target?.close();
  await db?.dispose();
});

describe("a dispatcher killed mid-attempt", () => {
  it("does not spend one of the delivery's tries", async () => {
    // First request: held (its dispatcher dies meanwhile); second: 500; third: 200.
    target = await startReceiver((_, previous) => (previous === 0 ? { status: 200, delayMs: 60_000 } : { status: previous === 1 ? 500 : 200 }));
    const settings = { WEBHOOK_RETRY_SCHEDULE: "0s,100ms", WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "6s" };
    const doomed = await startDispatcherProcess(db.url, settings);
    const org = await createOrganization(db, "Crashing Caterers");
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
    await db.run(Clients.create(apiKeyActor(org.scope), { name: "Ada" }));
    await waitFor("the first attempt to arrive", async () => target.received.length === 1 || undefined, 10_000);
    await doomed.kill();

    await startDispatcherProcess(db.url, settings);
    const [delivery] = await waitFor("the delivery to settle", async () => {
      const deliveries = await deliveriesOf(db, org.id);
      return deliveries[0]?.status === "pending" ? undefined : deliveries;
    }, 20_000);
    expect(target.received).toHaveLength(3);
    expect(delivery!.status).toBe("succeeded");
    expect(delivery!.attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 200]]);
  }, 40_000);
});
