import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError, type DietFlags, MissingRecipeError, NotFoundError, PlatterError } from "../src/index.ts";
import { seedRecordsWithChildren, type SdkTestbed, type Sql, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * `events.manifest(id)` against the real API: an event's dishes with their recipes' allergens and
 * diet flags, each distinct recipe read once (the requests are recorded by the client's `fetch`),
 * at most `concurrency` at a time; a missing event, a recipe removed between the reads, a failure
 * after retries.
 */

let bed: SdkTestbed;
let menu: Awaited<ReturnType<typeof seedMenu>>;

/** Every request the client sent (`GET /v1/…`), in order, and how many were under way at most. */
let sent: string[];
let inFlight: number;
let mostInFlight: number;
/** Runs after the event's response arrived and before its recipes are requested. */
let afterEventRead: (() => Promise<void>) | undefined;
/** Answers a request instead of the API when it returns a response. */
let intercept: ((path: string) => Response | undefined) | undefined;

const recordingFetch: typeof fetch = async (input, init) => {
  const path = new URL(String(input)).pathname;
  sent.push(`${init?.method} ${path}`);
  mostInFlight = Math.max(mostInFlight, ++inFlight);
  try {
    const response = intercept?.(path) ?? (await fetch(input, init));
    if (path.includes("/events/")) await afterEventRead?.();
    return response;
  } finally {
    inFlight--;
  }
};

beforeEach(() => {
  sent = [];
  inFlight = 0;
  mostInFlight = 0;
  afterEventRead = undefined;
  intercept = undefined;
});

const client = (options: { maxRetries?: number } = {}) => bed.platter({ apiKey: bed.org.readKey, fetch: recordingFetch, ...options });

const idOf = (rows: ReadonlyArray<{ id: string }>): number => Number(rows[0]!.id);

const insertRecipe = async (sql: Sql, organizationId: number, name: string, allergens: string[], flags: Partial<DietFlags> = {}) =>
  idOf(
    await sql<{ id: string }>(
      `insert into recipes (organization_id, name, servings, allergens, vegetarian, vegan, gluten_free, dairy_free)
       values (?, ?, 10, ?::text[], ?, ?, ?, ?) returning id`,
      [organizationId, name, `{${allergens.join(",")}}`, flags.vegetarian ?? false, flags.vegan ?? false, flags.gluten_free ?? false, flags.dairy_free ?? false],
    ),
  );

const insertEvent = async (sql: Sql, organizationId: number, name: string, dishes: ReadonlyArray<readonly [recipeId: number, course: string, servings: number]>) => {
  const eventId = idOf(
    await sql<{ id: string }>(`insert into events (organization_id, name, event_date, guests) values (?, ?, date '2027-09-04', 60) returning id`, [
      organizationId,
      name,
    ]),
  );
  const dishIds: number[] = [];
  for (const [position, [recipeId, course, servings]] of dishes.entries()) {
    dishIds.push(
      idOf(
        await sql<{ id: string }>(
          `insert into dishes (organization_id, event_id, recipe_id, position, course, servings) values (?, ?, ?, ?, ?, ?) returning id`,
          [organizationId, eventId, recipeId, position + 1, course, servings],
        ),
      ),
    );
  }
  return { eventId, dishIds };
};

const ALL_DIETS = { vegetarian: true, vegan: true, gluten_free: true, dairy_free: true };

/** Four recipes and a gala whose five dishes use them, one twice. */
const seedMenu = async (sql: Sql, organizationId: number) => {
  const vegetables = await insertRecipe(sql, organizationId, "Roasted root vegetables", ["celery"], ALL_DIETS);
  const wellington = await insertRecipe(sql, organizationId, "Beef Wellington", ["gluten", "eggs", "mustard"]);
  const tart = await insertRecipe(sql, organizationId, "Lemon tart", ["eggs", "milk", "gluten"], { vegetarian: true });
  const spritz = await insertRecipe(sql, organizationId, "Elderflower spritz", ["sulphites"], ALL_DIETS);
  const gala = await insertEvent(sql, organizationId, "Harbour gala", [
    [vegetables, "starter", 60],
    [wellington, "main", 60],
    [vegetables, "side", 60],
    [tart, "dessert", 60],
    [spritz, "drink", 120],
  ]);
  return { vegetables, wellington, tart, spritz, gala };
};

beforeAll(async () => {
  bed = await startSdkTestbed();
  menu = await seedMenu(bed.sql, bed.org.id);
});
afterAll(() => bed?.close());

describe("events.manifest(id)", () => {
  it("answers the event, its dishes with their recipes' allergens and diet flags, the allergens of all and the flags every dish has", async () => {
    const platter = client();
    const { dishes, ...event } = await platter.events.retrieve(menu.gala.eventId);
    sent = [];

    const manifest = await platter.events.manifest(menu.gala.eventId);

    const [vegetables, wellington, tart, spritz] = await Promise.all(
      [menu.vegetables, menu.wellington, menu.tart, menu.spritz].map((id) => platter.recipes.retrieve(id)),
    );
    const withRecipe = (dish: (typeof dishes)[number], recipe: typeof vegetables) => ({
      ...dish, recipe_name: recipe!.name, allergens: recipe!.allergens, diet_flags: recipe!.diet_flags,
    });
    expect(manifest).toEqual({
      event,
      dishes: [
        withRecipe(dishes[0]!, vegetables),
        withRecipe(dishes[1]!, wellington),
        withRecipe(dishes[2]!, vegetables),
        withRecipe(dishes[3]!, tart),
        withRecipe(dishes[4]!, spritz),
      ],
      allergens: ["celery", "eggs", "gluten", "milk", "mustard", "sulphites"],
      diet_flags: { vegetarian: false, vegan: false, gluten_free: false, dairy_free: false },
    });
    expect(event).toMatchObject({ id: menu.gala.eventId, name: "Harbour gala", event_date: "2027-09-04", guests: 60 });
    expect(manifest.dishes.map((d) => [d.id, d.course, d.servings, d.recipe_name])).toEqual([
      [menu.gala.dishIds[0], "starter", 60, "Roasted root vegetables"],
      [menu.gala.dishIds[1], "main", 60, "Beef Wellington"],
      [menu.gala.dishIds[2], "side", 60, "Roasted root vegetables"],
      [menu.gala.dishIds[3], "dessert", 60, "Lemon tart"],
      [menu.gala.dishIds[4], "drink", 120, "Elderflower spritz"],
    ]);
    expect(manifest.dishes[1]!.allergens).toEqual(["gluten", "eggs", "mustard"]);
  });

  it("reads the event, then each distinct recipe once, however many dishes share it", async () => {
    await client().events.manifest(menu.gala.eventId);
    expect(sent[0]).toBe(`GET /v1/events/${menu.gala.eventId}`);
    expect(sent.slice(1).sort()).toEqual([menu.vegetables, menu.wellington, menu.tart, menu.spritz].map((id) => `GET /v1/recipes/${id}`).sort());
  });

  it.each<[string, ReadonlyArray<"vegetables" | "wellington" | "tart" | "spritz">, DietFlags]>([
    ["every flag when every dish has them all", ["vegetables", "spritz"], ALL_DIETS],
    ["only the flags every dish has", ["vegetables", "tart", "spritz"], { vegetarian: true, vegan: false, gluten_free: false, dairy_free: false }],
    ["none when one dish has none", ["spritz", "wellington"], { vegetarian: false, vegan: false, gluten_free: false, dairy_free: false }],
  ])("diet_flags: %s", async (_label, recipes, expected) => {
    const { eventId } = await insertEvent(bed.sql, bed.org.id, "Diet check", recipes.map((recipe) => [menu[recipe], "main", 10] as const));
    expect((await client().events.manifest(eventId)).diet_flags).toEqual(expected);
  });

  it("answers an event without dishes with no dishes, no allergens and no diet flag claimed", async () => {
    const { id } = await bed.platter().events.create({ name: "Menu to be decided" });
    const manifest = await client().events.manifest(id);
    expect(manifest).toEqual({
      event: expect.objectContaining({ id, name: "Menu to be decided" }),
      dishes: [],
      allergens: [],
      diet_flags: { vegetarian: false, vegan: false, gluten_free: false, dairy_free: false },
    });
    expect(manifest.event).not.toHaveProperty("dishes");
    expect(sent).toEqual([`GET /v1/events/${id}`]);
  });

  it("throws the NotFoundError of events.retrieve for another organization's event, and reads no recipe", async () => {
    const other = await bed.newOrganization("Other Catering");
    const { eventId } = await seedRecordsWithChildren(bed.sql, other.id);
    const call = client().events.manifest(eventId);
    await expect(call).rejects.toBeInstanceOf(NotFoundError);
    await expect(call).rejects.toMatchObject({ status: 404, requestId: expect.any(String) });
    expect(sent).toEqual([`GET /v1/events/${eventId}`]);
  });

  it("throws a MissingRecipeError naming the recipe and its dishes when a recipe is removed after the event was read", async () => {
    const doomed = await insertRecipe(bed.sql, bed.org.id, "Oysters", ["molluscs"]);
    const { eventId, dishIds } = await insertEvent(bed.sql, bed.org.id, "Raw bar", [
      [menu.spritz, "drink", 20],
      [doomed, "canape", 20],
      [doomed, "starter", 20],
    ]);
    afterEventRead = async () => {
      await bed.sql("delete from dishes where recipe_id = ?", [doomed]);
      await bed.sql("delete from recipes where id = ?", [doomed]);
    };

    const error: unknown = await client().events.manifest(eventId).catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(MissingRecipeError);
    expect(error).toBeInstanceOf(PlatterError);
    expect(error).not.toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({
      name: "MissingRecipeError", status: 404, requestId: expect.any(String), eventId, recipeId: doomed, dishIds: [dishIds[1], dishIds[2]],
    });
    expect((error as MissingRecipeError).message).toBe(
      `Event ${eventId}: recipe ${doomed} of dishes ${dishIds[1]}, ${dishIds[2]} was not found (removed since the event was read?); read the manifest again`,
    );
    expect((error as MissingRecipeError).cause).toBeInstanceOf(NotFoundError);
    expect(sent).toContain(`GET /v1/recipes/${doomed}`);
  });

  it("reads at most `concurrency` recipes at a time (default 4)", async () => {
    const recipes = await Promise.all(Array.from({ length: 7 }, (_, n) => insertRecipe(bed.sql, bed.org.id, `Canapé ${n}`, [])));
    const { eventId } = await insertEvent(bed.sql, bed.org.id, "Canapé reception", recipes.map((id) => [id, "canape", 30] as const));

    await client().events.manifest(eventId, { concurrency: 2 });
    expect(sent).toHaveLength(8);
    expect(mostInFlight).toBe(2);

    sent = [];
    mostInFlight = 0;
    await client().events.manifest(eventId);
    expect(sent).toHaveLength(8);
    expect(mostInFlight).toBe(4);
  });

  it("retries a recipe request as every GET is retried (a 503, then the answer)", async () => {
    let failed = 0;
    intercept = (path) =>
      path === `/v1/recipes/${menu.tart}` && failed++ === 0
        ? Response.json({ error: "Injected 503" }, { status: 503, headers: { "retry-after": "0" } })
        : undefined;
    const manifest = await client().events.manifest(menu.gala.eventId);
    expect(manifest.dishes[3]).toMatchObject({ recipe_name: "Lemon tart", allergens: ["eggs", "milk", "gluten"] });
    expect(sent.filter((request) => request === `GET /v1/recipes/${menu.tart}`)).toHaveLength(2);
  });

  it("throws a recipe's error after its retries, and starts no recipe request after the failure", async () => {
    intercept = (path) => (path.startsWith("/v1/recipes/") ? Response.json({ error: "Injected 503" }, { status: 503 }) : undefined);
    const call = client({ maxRetries: 0 }).events.manifest(menu.gala.eventId, { concurrency: 1 });
    await expect(call).rejects.toBeInstanceOf(ApiError);
    await expect(call).rejects.toMatchObject({ status: 503, message: "Injected 503" });
    expect(sent).toEqual([`GET /v1/events/${menu.gala.eventId}`, `GET /v1/recipes/${menu.vegetables}`]);
  });

  it.each([0, -1, 1.5, Number.NaN])("refuses concurrency %s with a TypeError before any request", async (concurrency) => {
    await expect(client().events.manifest(menu.gala.eventId, { concurrency })).rejects.toThrow(TypeError);
    expect(sent).toEqual([]);
  });
});
