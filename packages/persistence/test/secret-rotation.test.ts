import { Effect } from "effect";
import { TestClock } from "effect/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase, nothingHeld, testDeliveryPolicy } from "../src/testing/index.ts";

/** After a rotation the previous secret signs beside the new one until the overlap ends, by the Clock. */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Rotating Caterers");
});
afterAll(() => db?.dispose());

const DAY_MS = 24 * 3600_000;

describe("secret rotation", () => {
  it("claims deliveries with both secrets during the overlap, and with the new one alone after it", async () => {
    const result = await db.run(
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.now());
        const endpoints = yield* WebhookEndpointRepository;
        const queue = yield* DeliveryQueue;
        const clients = yield* ClientRepository;
        /** A new message, its delivery claimed at once: what the dispatcher would attempt. */
        const nextDelivery = Effect.gen(function* () {
          yield* clients.create(org.scope, { name: "Ada" });
          return (yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld)).due;
        });
        const { id, secret: first } = yield* endpoints.add(org.scope, "https://example.com/hook", []);
        const before = yield* nextDelivery;
        const { secret: second } = yield* endpoints.rotateSecret(org.scope, id, DAY_MS);
        const during = yield* nextDelivery;
        yield* TestClock.adjust("23 hours");
        const late = yield* nextDelivery;
        yield* TestClock.adjust("2 hours");
        const after = yield* nextDelivery;
        return { first, second, before, during, late, after };
      }).pipe(Effect.provide(TestClock.layer())),
    );
    expect(result.second).not.toBe(result.first);
    expect(result.before.map((d) => [d.secret, d.previousSecret])).toEqual([[result.first, undefined]]);
    expect(result.during.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, result.first]]);
    expect(result.late.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, result.first]]);
    expect(result.after.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, undefined]]);
  });
});
