import { generateSigningSecret } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase, nothingHeld, testDeliveryPolicy } from "@platter/testing";
import { createClient } from "./created-records.ts";

/** After a rotation the previous secret signs beside the new one until the overlap ends, by the database's time. */

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
    // The overlap runs on the database's time, which only moves forward: the test moves the overlap's end back.
    const overlapPasses = (id: number, ms: number) => Effect.promise(() => db.orm.em.getConnection().execute(
      "update webhook_endpoints set previous_secret_until = previous_secret_until - ?::bigint * interval '1 millisecond' where id = ?", [ms, id]));
    const result = await db.run(
      Effect.gen(function* () {
        const endpoints = yield* WebhookEndpointRepository;
        const queue = yield* DeliveryQueue;
        /** A new message, its delivery claimed at once: what the dispatcher would attempt. */
        const nextDelivery = Effect.gen(function* () {
          yield* createClient(org.scope, { name: "Ada" });
          return (yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld)).due;
        });
        const { id, secret: first } = yield* endpoints.add(org.scope, "https://example.com/hook", [], generateSigningSecret());
        const before = yield* nextDelivery;
        const { secret: second } = yield* endpoints.rotateSecret(org.scope, id, DAY_MS, generateSigningSecret());
        const during = yield* nextDelivery;
        yield* overlapPasses(id, 23 * 3600_000);
        const late = yield* nextDelivery;
        yield* overlapPasses(id, 2 * 3600_000);
        const after = yield* nextDelivery;
        return { first, second, before, during, late, after };
      }),
    );
    expect(result.second).not.toBe(result.first);
    expect(result.before.map((d) => [d.secret, d.previousSecret])).toEqual([[result.first, undefined]]);
    expect(result.during.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, result.first]]);
    expect(result.late.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, result.first]]);
    expect(result.after.map((d) => [d.secret, d.previousSecret])).toEqual([[result.second, undefined]]);
  });
});
