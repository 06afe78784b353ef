import { EVENT_TYPES } from "@platter/domain";
import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/** Events: creating (201 `{id}`, one outbox row), validating, and reading back with dishes. */

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Events Catering", "EUR");
});
afterAll(() => api?.close());

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const create = (body: unknown, key = org.writeKey) => api.call("POST", "/v1/events", { key, body });

const expectCreated = (response: { status: number; body: any; headers: Headers }): number => {
  expect(response.status).toBe(201);
  expect(Object.keys(response.body)).toEqual(["id"]);
  expect(Number.isSafeInteger(response.body.id) && response.body.id > 0).toBe(true);
  expect(response.headers.get("location")).toBe(`/v1/events/${response.body.id}`);
  return response.body.id;
};

const countsOf = async (organizationId: number) => {
  const [row] = await api.sql<{ events: string; outbox: string }>(
    `select (select count(*) from events where organization_id = ?) as events,
            (select count(*) from webhook_messages where organization_id = ?) as outbox`,
    [organizationId, organizationId],
  );
  return { events: Number(row!.events), outbox: Number(row!.outbox) };
};

describe("POST /v1/events", () => {
  it("creates an event from a name alone: 201, `{id}`, Location, and GET shows it", async () => {
    const id = expectCreated(await create({ name: "Spring Gala" }));
    const shown = await api.call("GET", `/v1/events/${id}`, { key: org.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      id,
      name: "Spring Gala",
      event_date: null,
      guests: null,
      price_per_head: null,
      event_type: null,
      currency: "EUR",
      status: "inquiry",
      dishes: [],
    });
    expect(shown.body.created_at).toMatch(ISO_MILLIS);
    const list = await api.call("GET", "/v1/events?limit=1", { key: org.readKey });
    expect(list.status).toBe(200);
    expect(list.body.data[0]).toMatchObject({ id, name: "Spring Gala" });
  });

  it("stores every field and shows it back exactly", async () => {
    const id = expectCreated(
      await create({ name: "Wedding Smith", event_date: "2026-06-20", guests: 120, price_per_head: 49.95, event_type: "wedding" }),
    );
    const shown = await api.call("GET", `/v1/events/${id}`, { key: org.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({
      id,
      name: "Wedding Smith",
      event_date: "2026-06-20",
      guests: 120,
      price_per_head: 49.95,
      event_type: "wedding",
      currency: "EUR",
    });
  });

  it("accepts null for every optional field", async () => {
    const id = expectCreated(await create({ name: "Nulls", event_date: null, guests: null, price_per_head: null, event_type: null }));
    const shown = await api.call("GET", `/v1/events/${id}`, { key: org.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ event_date: null, guests: null, price_per_head: null, event_type: null });
  });

  it("writes exactly one event.created outbox row carrying the new id", async () => {
    const own = await api.newOrganization("Outbox events");
    const id = expectCreated(await create({ name: "Outboxed", guests: 10 }, own.writeKey));
    const rows = await api.sql<{ type: string; payload: any }>("select type, payload from webhook_messages where organization_id = ?", [own.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.type).toBe("event.created");
    expect(rows[0]!.payload.data).toMatchObject({ id, name: "Outboxed", guests: 10 });
    const second = expectCreated(await create({ name: "Second" }, own.writeKey));
    const after = await api.sql<{ type: string; payload: any }>("select type, payload from webhook_messages where organization_id = ? order by id", [own.id]);
    expect(after.map((row) => [row.type, row.payload.data.id])).toEqual([
      ["event.created", id],
      ["event.created", second],
    ]);
  });

  it.each(EVENT_TYPES)("accepts event_type %s", async (eventType) => {
    const id = expectCreated(await create({ name: `Type ${eventType}`, event_type: eventType }));
    const shown = await api.call("GET", `/v1/events/${id}`, { key: org.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body.event_type).toBe(eventType);
  });

  it.each([
    ["guests 1", { guests: 1 }],
    ["guests 100000", { guests: 100_000 }],
    ["a leap day", { event_date: "2028-02-29" }],
    ["price 0", { price_per_head: 0 }],
    ["a whole price", { price_per_head: 35 }],
    ["one decimal", { price_per_head: 12.5 }],
    ["a 200-character name", { name: "n".repeat(200) }],
  ])("accepts %s", async (_case, fields) => {
    expectCreated(await create({ name: "Boundary", ...fields }));
  });

  const invalid: ReadonlyArray<[string, unknown, RegExp]> = [
    ["an empty object", {}, /^name is required$/],
    ["fields but no name", { guests: 10, event_date: "2026-01-01" }, /^name is required$/],
    ["name null", { name: null }, /name/],
    ["name a number", { name: 5 }, /name/],
    ["name an array", { name: ["x"] }, /name/],
    ["name an object", { name: { first: "x" } }, /name/],
    ["name empty", { name: "" }, /name/],
    ["name blank", { name: "   " }, /name/],
    ["name over 200 characters", { name: "n".repeat(201) }, /name/],
    ["name with a NUL character", { name: "a\u0000b" }, /name/],
    ["an impossible date", { name: "x", event_date: "2026-02-30" }, /event_date/],
    ["no leap day", { name: "x", event_date: "2026-02-29" }, /event_date/],
    ["month 13", { name: "x", event_date: "2026-13-01" }, /event_date/],
    ["day 0", { name: "x", event_date: "2026-01-00" }, /event_date/],
    ["an unpadded date", { name: "x", event_date: "2026-1-5" }, /event_date/],
    ["a date-time", { name: "x", event_date: "2026-01-05T10:00:00Z" }, /event_date/],
    ["a day-first date", { name: "x", event_date: "05/01/2026" }, /event_date/],
    ["a number as date", { name: "x", event_date: 20260105 }, /event_date/],
    ["an empty date", { name: "x", event_date: "" }, /event_date/],
    ["guests negative", { name: "x", guests: -5 }, /guests/],
    ["guests zero", { name: "x", guests: 0 }, /guests/],
    ["guests fractional", { name: "x", guests: 1.5 }, /guests/],
    ["guests a string", { name: "x", guests: "10" }, /guests/],
    ["guests a boolean", { name: "x", guests: true }, /guests/],
    ["guests too many", { name: "x", guests: 100_001 }, /guests/],
    ["guests huge", { name: "x", guests: 1e21 }, /guests/],
    ["price negative", { name: "x", price_per_head: -1 }, /price_per_head/],
    ["price a string", { name: "x", price_per_head: "12.50" }, /price_per_head/],
    ["price with too many decimals for EUR", { name: "x", price_per_head: 12.345 }, /price_per_head/],
    ["price far too precise", { name: "x", price_per_head: 1e-7 }, /price_per_head/],
    ["price huge", { name: "x", price_per_head: 1e300 }, /price_per_head/],
    ["event_type unknown", { name: "x", event_type: "gala" }, /event_type/],
    ["event_type a number", { name: "x", event_type: 3 }, /event_type/],
    ["event_type wrong case", { name: "x", event_type: "Wedding" }, /event_type/],
    ["an unknown field", { name: "x", x: 1 }, /^unknown field: x$/],
    ["an unknown field with a null value", { name: "x", colour: null }, /^unknown field: colour$/],
    ["a field of another resource", { name: "x", email: "a@example.com" }, /^unknown field: email$/],
    ["a server-side field", { name: "x", id: 7 }, /^unknown field: id$/],
    ["status", { name: "x", status: "confirmed" }, /^unknown field: status$/],
  ];

  it.each(invalid)("refuses %s with 400 naming the problem, and stores nothing", async (_case, body, error) => {
    const before = await countsOf(org.id);
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(error);
    expect(await countsOf(org.id)).toEqual(before);
  });

  it("refuses a price a JSON number cannot carry exactly (1e400) with 400", async () => {
    const response = await api.call("POST", "/v1/events", { key: org.writeKey, body: '{"name":"x","price_per_head":1e400}' });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/price_per_head/);
  });
});

describe("price_per_head follows the currency's minor unit", () => {
  it.each([
    ["EUR", 12.34, 201, 12.34],
    ["EUR", 19.99, 201, 19.99],
    ["EUR", 0.1, 201, 0.1],
    ["EUR", 12.345, 400, undefined],
    ["JPY", 1500, 201, 1500],
    ["JPY", 12.5, 400, undefined],
    ["KWD", 12.345, 201, 12.345],
    ["KWD", 12.3456, 400, undefined],
  ] as const)("%s %d → %i", async (currency, price, status, shown) => {
    const own = await api.newOrganization(`Priced in ${currency}`, currency);
    const before = await countsOf(own.id);
    const response = await create({ name: "Priced", price_per_head: price }, own.writeKey);
    expect(response.status).toBe(status);
    if (status === 400) {
      expect(response.body.error).toMatch(/price_per_head/);
      expect(await countsOf(own.id)).toEqual(before);
      return;
    }
    const detail = await api.call("GET", `/v1/events/${response.body.id}`, { key: own.readKey });
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ price_per_head: shown, currency });
  });
});

describe("GET /v1/events/{id}", () => {
  it("includes the event's dishes in menu order", async () => {
    const id = expectCreated(await create({ name: "Tasting menu" }));
    const recipes = await api.sql<{ id: string; name: string }>(
      `insert into recipes (organization_id, name, servings) values (?, 'Gazpacho', 4), (?, 'Tiramisu', 8) returning id, name`,
      [org.id, org.id],
    );
    const recipeId = (name: string) => Number(recipes.find((row) => row.name === name)!.id);
    await api.sql(
      `insert into dishes (organization_id, event_id, recipe_id, position, course, servings)
       values (?, ?, ?, 2, 'dessert', 40), (?, ?, ?, 1, 'starter', 40)`,
      [org.id, id, recipeId("Tiramisu"), org.id, id, recipeId("Gazpacho")],
    );
    const shown = await api.call("GET", `/v1/events/${id}`, { key: org.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body.dishes).toEqual([
      { id: expect.any(Number), recipe_id: recipeId("Gazpacho"), recipe_name: "Gazpacho", course: "starter", servings: 40 },
      { id: expect.any(Number), recipe_id: recipeId("Tiramisu"), recipe_name: "Tiramisu", course: "dessert", servings: 40 },
    ]);
  });

  it("lists events without their dishes", async () => {
    const list = await api.call("GET", "/v1/events", { key: org.readKey });
    expect(list.status).toBe(200);
    for (const event of list.body.data) {
      expect(event).not.toHaveProperty("dishes");
      expect(event).toHaveProperty("id");
      expect(event).toHaveProperty("name");
    }
  });
});
