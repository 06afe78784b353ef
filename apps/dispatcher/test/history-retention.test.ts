import { ClientRepository, WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/persistence/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";

/** Bounded history, in a real dispatcher process: under sustained load the tables stay small, and once it stops they empty. */

let db: TestDatabase;
let target: Receiver;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  target = await startReceiver();
});
afterAll(async () => {
  await killLeftoverDispatchers();
  await target?.close();
  await db?.dispose();
});

const ROUNDS = 20;
const PER_ROUND = 10;

const rowCounts = async () => {
  const [row] = await sql<{ messages: number; deliveries: number; attempts: number }>(
    db,
    `select (select count(*)::int from webhook_messages) as messages, (select count(*)::int from webhook_deliveries) as deliveries,
       (select count(*)::int from webhook_attempts) as attempts`,
  );
  return row!;
};

describe("delivery history retention", () => {
  it(`keeps the tables small while ${ROUNDS * PER_ROUND} messages are delivered with a 1 s window, and empties them after`, async () => {
    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_RETENTION: "1s", WEBHOOK_RETENTION_SWEEP: "200ms" });
    const org = await createOrganization(db, "Retaining Caterers");
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [])));
    const observed: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PER_ROUND; i++) {
        await db.run(ClientRepository.use((r) => r.create(org.scope, { name: `Client ${round}-${i}` })));
      }
      observed.push((await rowCounts()).deliveries);
      await new Promise((done) => setTimeout(done, 250));
    }
    await waitFor("every message delivered", () => target.countsByEnvelope().size === ROUNDS * PER_ROUND, 30_000);
    // Produced at about 40 a second and kept about a second: far fewer rows at any time than were produced.
    expect(Math.max(...observed)).toBeLessThan((ROUNDS * PER_ROUND) / 2);
    expect(observed.length).toBe(ROUNDS);
    const empty = await waitFor(
      "the history removed",
      async () => {
        const counts = await rowCounts();
        return counts.messages + counts.deliveries + counts.attempts === 0 ? counts : undefined;
      },
      30_000,
    );
    expect(empty).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
    expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  });
});
