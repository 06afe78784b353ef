import { generateSigningSecret, InvalidInput } from "@platter/domain";
import { Effect, Exit } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { inOneTransaction, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * `inOneTransaction`: the storage calls composed in it, each of which would otherwise commit on its
 * own (or in a transaction of its own), commit together or not at all.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const count = async (table: "clients" | "webhook_endpoints" | "webhook_messages", organizationId: number) =>
  (await db.orm.em.getConnection().execute<{ n: number }[]>(`select count(*)::int as n from ${table} where organization_id = ?`, [organizationId]))[0]!.n;

describe("inOneTransaction", () => {
  it("commits every call in it together", async () => {
    const org = await createOrganization(db);
    await db.run(inOneTransaction(Effect.all([
      createClient(org.scope, { name: "First" }),
      createClient(org.scope, { name: "Second" }),
      WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.40/hook", [], generateSigningSecret())),
    ])));
    expect([await count("clients", org.id), await count("webhook_messages", org.id), await count("webhook_endpoints", org.id)]).toEqual([2, 2, 1]);
  });

  it("writes nothing when a call in it fails, its own transactions included", async () => {
    const org = await createOrganization(db);
    const exit = await db.run(Effect.exit(inOneTransaction(Effect.gen(function* () {
      yield* createClient(org.scope, { name: "Rolled back" });
      // `add` runs a transaction of its own (a lock on the organization's endpoint count): it joins this one.
      yield* WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.41/hook", [], generateSigningSecret()));
      return yield* Effect.fail(new InvalidInput({ message: "refused after the writes" }));
    }))));
    expect(Exit.isFailure(exit)).toBe(true);
    expect([await count("clients", org.id), await count("webhook_messages", org.id), await count("webhook_endpoints", org.id)]).toEqual([0, 0, 0]);
  });
});
