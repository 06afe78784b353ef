import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  killLeftoverDispatchers, metricValue, type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver,
} from "./dispatcher-harness.ts";
import { expectSignedEnvelope } from "./envelope-checks.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/** Two dispatcher processes sharing one database: leases split the work, nothing is sent twice. */

const EVENTS = 320;

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

describe("two dispatchers in parallel", () => {
  it(`deliver ${EVENTS} events exactly once between them`, async () => {
    target = await startReceiver(() => ({ status: 200, delayMs: 15 }));
    // A production-like lease (timeout + 30 s): on a loaded machine a 2 s lease can run out before a
    // result is written, and a re-claim after an expired lease is at-least-once, not what this tests.
    const settings = { WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "35s" };
    const [first, second] = await Promise.all([startDispatcherProcess(db.url, settings), startDispatcherProcess(db.url, settings)]);
    const org = await createOrganization(db, "Busy Caterers");
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));

    // Created while both run, ten at a time: both race to fan out and claim.
    const ids: number[] = [];
    for (let start = 0; start < EVENTS; start += 10) {
      const batch = Array.from({ length: 10 }, (_, i) =>
        Clients.create(apiKeyActor(org.scope), { name: `Client ${start + i}` }),
      );
      ids.push(...(await Promise.all(batch.map((create) => db.run(create)))).map((c) => c.id));
    }

    const deliveries = await settledDeliveries(db, org.id, EVENTS, 60_000);
    expect(deliveries.filter((d) => d.status !== "succeeded")).toEqual([]);

    const counts = target.countsByEnvelope();
    const duplicates = target.received.length - counts.size;
    console.info(`parallel dispatchers: ${target.received.length} requests for ${counts.size} envelopes, ${duplicates} duplicates`);
    expect(duplicates).toBe(0);
    expect(target.concurrentRepeats).toEqual([]);
    expect([...counts.keys()].sort()).toEqual(deliveries.map((d) => d.envelope_id).sort());
    expect(target.received.map((r) => r.envelope.data.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
    for (const delivery of deliveries) expect(delivery.attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 200]]);
    const [claims] = await sql<{ max: number }>(db, "select max(attempts) as max from webhook_deliveries where organization_id = ?", [org.id]);
    expect(claims!.max).toBe(1);
    for (const request of target.received.slice(0, 3)) {
      await expectSignedEnvelope(request, {
        type: "client.created", secret: endpoint.secret, dataId: request.envelope.data.id, dataName: request.envelope.data.name,
      });
    }

    // Between them, the two processes counted every attempt once.
    const succeeded = await Promise.all(
      [first, second].map(async (d) =>
        metricValue(await (await fetch(`${d.opsUrl}/metrics`)).text(), 'platter_webhook_attempts_total{outcome="succeeded"}')!,
      ),
    );
    console.info(`parallel dispatchers: attempts per process ${succeeded.join(" + ")}`);
    expect(succeeded[0]! + succeeded[1]!).toBe(EVENTS);

    const exits = await Promise.all([first.terminate(), second.terminate()]);
    expect(exits.map((e) => e.code)).toEqual([0, 0]);
  });
});
