import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, pgBouncerBinary, startTestPgBouncer, type TestDatabase, type TestPgBouncer } from "@platter/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, settledDeliveries, startDispatcherProcess, startReceiver } from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * A dispatcher whose pool goes through a real PgBouncer in transaction mode (Debian's 1.18): it
 * LISTENs on `DATABASE_LISTEN_URL`, straight to PostgreSQL; without one it says once that it polls,
 * and still delivers. Skipped, saying so, on a machine without PgBouncer.
 */

const installed = pgBouncerBinary() !== undefined;
if (!installed) console.warn("pgbouncer.test.ts: skipped, pgbouncer is not installed (apt install pgbouncer)");

let db: TestDatabase;
let bouncer: TestPgBouncer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  if (!installed) return;
  db = await createTestDatabase(inject("pgAdminUrl"));
  bouncer = await startTestPgBouncer(inject("pgAdminUrl"), 4);
});
afterEach(async () => {
  await killLeftoverDispatchers();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await bouncer?.stop();
  await db?.dispose();
});

const POLLING = "DATABASE_URL is a transaction pooler and DATABASE_LISTEN_URL is unset";

describe.skipIf(!installed)("a dispatcher behind PgBouncer 1.18 in transaction mode", () => {
  it.each([
    ["with DATABASE_LISTEN_URL, listening straight to PostgreSQL", true],
    ["without it, polling, and saying so once", false],
  ])("delivers %s", async (_name, listens) => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const pooled = bouncer.urlOf(new URL(db.url).pathname.slice(1));
    const dispatcher = await startDispatcherProcess(pooled, {
      DATABASE_POOLER: "transaction",
      DATABASE_LISTEN_URL: listens ? db.url : undefined,
      DISPATCHER_POLL_INTERVAL: "300ms",
    });
    const org = await createOrganization(db, listens ? "Listening" : "Polling");
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, receiver.url, [], generateSigningSecret())));
    for (let i = 0; i < 5; i++) await db.run(Clients.create(apiKeyActor(org.scope), { name: `Client ${i}` }));
    const deliveries = await settledDeliveries(db, org.id, 5);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(Array(5).fill("succeeded"));
    expect(receiver.received).toHaveLength(5);
    expect((await dispatcher.terminate()).code).toBe(0);
    expect(dispatcher.output().split(POLLING).length - 1).toBe(listens ? 0 : 1);
  });
});
