import { generateSigningSecret } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Housekeeping, WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, type TestDatabase, nothingHeld, testDeliveryPolicy } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * Bounded history: messages older than the window go with their settled deliveries and attempts; one
 * with a delivery pending never does. The window is the database's clock's: time moves by moving rows.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const HOUR_MS = 3600_000;
const counts = async () => {
  const [row] = await db.orm.em.getConnection().execute<{ messages: number; deliveries: number; attempts: number; pending: number }[]>(
    `select (select count(*)::int from webhook_messages) as messages, (select count(*)::int from webhook_deliveries) as deliveries,
       (select count(*)::int from webhook_attempts) as attempts,
       (select count(*)::int from webhook_deliveries where status = 'pending') as pending`,
  );
  return row!;
};

/** Two hours pass for the history written so far: every message's creation moves two hours back. */
const twoHoursPass = Effect.promise(() => db.orm.em.getConnection().execute("update webhook_messages set created_at = created_at - interval '2 hours'"));

describe("pruneDeliveryHistory", () => {
  it("removes settled history older than the window, by the database's clock, and keeps what is pending", async () => {
    const withEndpoint = await createOrganization(db, "Delivering Caterers");
    const withoutEndpoint = await createOrganization(db, "Quiet Caterers");
    const removed = await db.run(
      Effect.gen(function* () {
        const queue = yield* DeliveryQueue;
        const housekeeping = yield* Housekeeping;
        yield* (yield* WebhookEndpointRepository).add(withEndpoint.scope, "https://example.com/hook", [], generateSigningSecret());
        for (const name of ["Succeeds", "Fails for good", "Still pending"]) yield* createClient(withEndpoint.scope, { name });
        yield* createClient(withoutEndpoint.scope, { name: "Nobody listens" });
        const [succeeds, fails] = (yield* queue.claimDue(2, 60_000, testDeliveryPolicy, nothingHeld)).due;
        const result = (outcome: "succeeded" | "failed") => ({
          startedAt: new Date(), durationMs: 3, statusCode: outcome === "succeeded" ? 200 : 500, error: undefined,
          responseBody: "", outcome,
        });
        yield* queue.recordAttempts([{ delivery: succeeds!, ...result("succeeded") }, { delivery: fails!, ...result("failed") }], testDeliveryPolicy);
        const early = yield* housekeeping.pruneDeliveryHistory(HOUR_MS, 100);
        yield* twoHoursPass;
        const late = yield* housekeeping.pruneDeliveryHistory(HOUR_MS, 100);
        const again = yield* housekeeping.pruneDeliveryHistory(HOUR_MS, 100);
        return { early, late, again };
      }),
    );
    expect(removed.early).toEqual({ deliveries: 0, messages: 0 });
    expect(removed.late).toEqual({ deliveries: 2, messages: 3 });
    expect(removed.again).toEqual({ deliveries: 0, messages: 0 });
    expect(await counts()).toEqual({ messages: 1, deliveries: 1, attempts: 0, pending: 1 });
  });

  it("removes at most a batch at a time", async () => {
    const org = await createOrganization(db, "Busy Caterers");
    const removed = await db.run(
      Effect.gen(function* () {
        for (let i = 0; i < 5; i++) yield* createClient(org.scope, { name: `Client ${i}` });
        yield* twoHoursPass;
        const housekeeping = yield* Housekeeping;
        return [yield* housekeeping.pruneDeliveryHistory(HOUR_MS, 2), yield* housekeeping.pruneDeliveryHistory(HOUR_MS, 2)];
      }),
    );
    expect(removed).toEqual([{ deliveries: 0, messages: 2 }, { deliveries: 0, messages: 2 }]);
  });
});
