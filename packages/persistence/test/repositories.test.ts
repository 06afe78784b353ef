import { makeClientRepository, makeEventRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type TestDatabase } from "../src/testing/index.ts";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("repositories", () => {
  it("creates a client and writes client.created to the outbox in one go", async () => {
    const org = await createOrganization(db.orm);
    const clients = makeClientRepository(db.orm);
    const { id } = await Effect.runPromise(clients.create(org.scope, { name: "Ada's Bakery", email: "ada@example.com" }));
    const page = await Effect.runPromise(clients.list(org.scope, { limit: 10, after: undefined }));
    expect(page.data).toMatchObject([{ id, name: "Ada's Bakery", email: "ada@example.com", phone: null }]);
    const outbox = await db.orm.em.getConnection().execute("select type, payload from outbox_events where organization_id = ?", [org.id]);
    expect(outbox).toMatchObject([{ type: "client.created", payload: { version: 1, data: { id, name: "Ada's Bakery" } } }]);
  });

  it("stores price per head exactly and reads the event back", async () => {
    const org = await createOrganization(db.orm);
    const events = makeEventRepository(db.orm);
    const { id } = await Effect.runPromise(events.create(org.scope, { name: "Gala", price_per_head: 42.1, guests: 80 }));
    const event = await Effect.runPromise(events.get(org.scope, id));
    expect(event).toMatchObject({ id, name: "Gala", price_per_head: 42.1, guests: 80, currency: "EUR", status: "inquiry", dishes: [] });
    expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
