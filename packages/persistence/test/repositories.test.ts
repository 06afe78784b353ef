import { ClientRepository, EventRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("repositories", () => {
  it("creates a client and writes client.created to the outbox in one go", async () => {
    const org = await createOrganization(db);
    const { id } = await db.run(ClientRepository.use((clients) => clients.create(org.scope, { name: "Ada's Bakery", email: "ada@example.com" })));
    const page = await db.run(ClientRepository.use((clients) => clients.list(org.scope, { limit: 10, after: undefined })));
    expect(page.data).toMatchObject([{ id, name: "Ada's Bakery", email: "ada@example.com", phone: null }]);
    const outbox = await db.orm.em.getConnection().execute("select type, payload from webhook_messages where organization_id = ?", [org.id]);
    expect(outbox).toMatchObject([{ type: "client.created", payload: { version: 1, data: { id, name: "Ada's Bakery" } } }]);
  });

  it("stores price per head exactly and reads the event back", async () => {
    const org = await createOrganization(db);
    const { id } = await db.run(EventRepository.use((events) => events.create(org.scope, { name: "Gala", price_per_head: 42.1, guests: 80 })));
    const event = await db.run(EventRepository.use((events) => events.get(org.scope, id)));
    expect(event).toMatchObject({ id, name: "Gala", price_per_head: 42.1, guests: 80, currency: "EUR", status: "inquiry", dishes: [] });
    expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });
});
