import { ClientRepository, EventRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** The record stores: a row inserted is read back as the API shows it (the creates with their messages are the application's). */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("repositories", () => {
  it("inserts a client and lists it as the API shows it", async () => {
    const org = await createOrganization(db);
    const id = await db.run(ClientRepository.use((clients) => clients.insert(org.scope, { name: "Ada's Bakery", email: "ada@example.com" })));
    const page = await db.run(ClientRepository.use((clients) => clients.list(org.scope, { limit: 10, after: undefined })));
    expect(page.data).toMatchObject([{ id, name: "Ada's Bakery", email: "ada@example.com", phone: null }]);
    expect(await db.run(ClientRepository.use((clients) => clients.read(org.scope, id)))).toEqual(page.data[0]);
  });

  it("stores price per head exactly and reads the event back", async () => {
    const org = await createOrganization(db);
    const id = await db.run(EventRepository.use((events) => events.insert(org.scope, {
      clientId: null, name: "Gala", eventDate: null, guests: 80, pricePerHeadMinor: 4210, eventType: null,
    })));
    const event = await db.run(EventRepository.use((events) => events.get(org.scope, id)));
    expect(event).toMatchObject({ id, name: "Gala", price_per_head: 42.1, guests: 80, currency: "EUR", status: "inquiry", dishes: [] });
    expect(event.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const { dishes: _, ...shown } = event;
    expect(await db.run(EventRepository.use((events) => events.read(org.scope, id)))).toEqual(shown);
  });
});
