import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PageList, Platter } from "../src/index.ts";
import { seedRecordsWithChildren, type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * Every SDK method against the real API: each answers exactly what the API answers for the same
 * request (compared with a plain HTTP call), typed from the generated OpenAPI types.
 */

let bed: SdkTestbed;
let seeded: Awaited<ReturnType<typeof seedRecordsWithChildren>>;
let platter: Platter;

beforeAll(async () => {
  bed = await startSdkTestbed();
  seeded = await seedRecordsWithChildren(bed.sql, bed.org.id);
  platter = bed.platter({ apiKey: bed.org.readKey });
});
afterAll(() => bed?.close());

/** The API's own answer to a GET, for comparison. */
const raw = async (path: string): Promise<any> => {
  const response = await fetch(`${bed.baseUrl}${path}`, { headers: { authorization: `Bearer ${bed.org.readKey}` } });
  expect(response.status).toBe(200);
  return response.json();
};

describe("me", () => {
  it("retrieve() answers the key's organization", async () => {
    const me = await platter.me.retrieve();
    expect(me).toEqual(await raw("/me"));
    expect(me).toMatchObject({ id: bed.org.id, name: "SDK Catering", currency: "EUR" });
  });
});

describe("events", () => {
  it("list() walks the events as GET /events lists them", async () => {
    const events = await platter.events.list().toArray();
    expect(events).toEqual((await raw("/events")).data);
    expect(events.map((e) => e.id)).toContain(seeded.eventId);
  });

  it("retrieve(id) answers the event with its dishes", async () => {
    const event = await platter.events.retrieve(seeded.eventId);
    expect(event).toEqual(await raw(`/events/${seeded.eventId}`));
    expect(event).toMatchObject({ name: "Summer wedding", guests: 80, price_per_head: 42.5, event_type: "wedding", status: "confirmed" });
    expect(event.dishes).toEqual([
      { id: expect.any(Number), recipe_id: seeded.recipeId, recipe_name: "Lemon tart", course: "dessert", servings: 80 },
    ]);
  });

  it("create(input) creates an event and answers its id", async () => {
    const writer = bed.platter();
    const input = { name: "Spring gala", event_date: "2027-04-17", guests: 120, price_per_head: 42.5, event_type: "corporate" } as const;
    const created = await writer.events.create(input);
    expect(created).toEqual({ id: expect.any(Number) });
    expect(await writer.events.retrieve(created.id)).toMatchObject({ ...input, id: created.id, status: "inquiry", dishes: [] });
  });

  it("create(input) with only the required name", async () => {
    const { id } = await bed.platter().events.create({ name: "Just a name" });
    expect(await platter.events.retrieve(id)).toMatchObject({ name: "Just a name", guests: null, event_date: null });
  });
});

describe("recipes", () => {
  it("list() walks the recipes with allergens and diet flags", async () => {
    const recipes = await platter.recipes.list().toArray();
    expect(recipes).toEqual((await raw("/recipes")).data);
    expect(recipes[0]).toMatchObject({ name: "Lemon tart", diet_flags: { vegetarian: true, vegan: false } });
    expect([...recipes[0]!.allergens].sort()).toEqual(["eggs", "gluten", "milk"]);
  });

  it("retrieve(id) answers the recipe with its ingredients", async () => {
    const recipe = await platter.recipes.retrieve(seeded.recipeId);
    expect(recipe).toEqual(await raw(`/recipes/${seeded.recipeId}`));
    expect(recipe.ingredients.map((i) => [i.name, i.quantity, i.unit])).toEqual([
      ["Lemons", 4, "piece"],
      ["Butter", 125, "g"],
    ]);
  });
});

describe("clients", () => {
  it("list() walks the clients by name", async () => {
    const clients = await platter.clients.list().toArray();
    expect(clients).toEqual((await raw("/clients")).data);
    expect(clients.map((c) => c.name)).toContain("Ada Lovelace");
  });

  it("create(input) creates a client and answers its id", async () => {
    const writer = bed.platter();
    const input = { name: "Grace Hopper", email: "grace@example.com", phone: "+1 202 555 0143", company: "Navy" };
    const created = await writer.clients.create(input);
    expect(created).toEqual({ id: expect.any(Number) });
    const listed = await writer.clients.list().toArray();
    expect(listed.find((c) => c.id === created.id)).toMatchObject(input);
  });
});

describe("invoices", () => {
  it("list() walks the invoices with computed totals", async () => {
    const invoices = await platter.invoices.list().toArray();
    expect(invoices).toEqual((await raw("/invoices")).data);
    expect(invoices[0]).toMatchObject({ id: seeded.invoiceId, number: "INV-0001", status: "sent", currency: "EUR" });
  });

  it("retrieve(id) answers the invoice with its line items", async () => {
    const invoice = await platter.invoices.retrieve(seeded.invoiceId);
    expect(invoice).toEqual(await raw(`/invoices/${seeded.invoiceId}`));
    expect(invoice.line_items.map((l) => [l.description, l.quantity, l.unit_price])).toEqual([
      ["Dinner", 80, 42.5],
      ["Service", 1, 150],
    ]);
    expect(invoice.subtotal).toBe(3550);
  });
});

describe("list()", () => {
  it("returns a PageList that is async-iterable and not a promise", () => {
    const list = platter.clients.list();
    expect(list).toBeInstanceOf(PageList);
    expect(typeof list[Symbol.asyncIterator]).toBe("function");
    expect("then" in list).toBe(false);
  });
});

describe("new Platter(options)", () => {
  it.each<[string, Record<string, unknown>, RegExp]>([
    ["no apiKey", { baseUrl: "http://127.0.0.1/v1" }, /apiKey/],
    ["a blank apiKey", { apiKey: " ", baseUrl: "http://127.0.0.1/v1" }, /apiKey/],
    ["no baseUrl", { apiKey: "k" }, /baseUrl/],
    ["a baseUrl without scheme", { apiKey: "k", baseUrl: "127.0.0.1/v1" }, /baseUrl/],
    ["a negative maxRetries", { apiKey: "k", baseUrl: "http://127.0.0.1/v1", maxRetries: -1 }, /maxRetries/],
    ["a fractional maxRetries", { apiKey: "k", baseUrl: "http://127.0.0.1/v1", maxRetries: 1.5 }, /maxRetries/],
    ["a zero timeoutMs", { apiKey: "k", baseUrl: "http://127.0.0.1/v1", timeoutMs: 0 }, /timeoutMs/],
  ])("refuses %s with a TypeError", (_label, options, message) => {
    expect(() => new Platter(options as never)).toThrow(TypeError);
    expect(() => new Platter(options as never)).toThrow(message);
  });

  it("accepts a base URL with a trailing slash", async () => {
    const me = await new Platter({ apiKey: bed.org.readKey, baseUrl: `${bed.baseUrl}/` }).me.retrieve();
    expect(me.id).toBe(bed.org.id);
  });

  it("uses the fetch it is given", async () => {
    const seen: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      seen.push(`${init?.method} ${String(input)}`);
      return fetch(input, init);
    };
    await bed.platter({ fetch: countingFetch }).me.retrieve();
    expect(seen).toEqual([`GET ${bed.baseUrl}/me`]);
  });
});
