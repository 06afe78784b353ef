import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/** Recipes: the list carries allergens and diet flags, the detail its ingredients. Read only. */

let api: ApiUnderTest;
let org: OrganizationFixture;
let quiche: number;
let salad: number;

beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Recipes Catering");
  const rows = await api.sql<{ id: string; name: string }>(
    `insert into recipes (organization_id, name, servings, allergens, vegetarian, vegan, gluten_free, dairy_free) values
       (?, 'Quiche Lorraine', 6, '{gluten,eggs,milk}', false, false, false, false),
       (?, 'Green Salad', 4, '{}', true, true, true, true)
     returning id, name`,
    [org.id, org.id],
  );
  quiche = Number(rows.find((row) => row.name === "Quiche Lorraine")!.id);
  salad = Number(rows.find((row) => row.name === "Green Salad")!.id);
  await api.sql(
    `insert into ingredients (organization_id, recipe_id, position, name, quantity, unit) values
       (?, ?, 3, 'Bacon', 200, 'g'),
       (?, ?, 1, 'Pastry', 1, 'piece'),
       (?, ?, 2, 'Cream', 0.25, 'l'),
       (?, ?, 4, 'Nutmeg', 0.125, 'pinch')`,
    [org.id, quiche, org.id, quiche, org.id, quiche, org.id, quiche],
  );
});
afterAll(() => api?.close());

describe("GET /v1/recipes", () => {
  it("lists recipes by name with their allergens and diet flags, without ingredients", async () => {
    const response = await api.call("GET", "/v1/recipes", { key: org.readKey });
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual([
      {
        id: salad,
        name: "Green Salad",
        servings: 4,
        allergens: [],
        diet_flags: { vegetarian: true, vegan: true, gluten_free: true, dairy_free: true },
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      },
      {
        id: quiche,
        name: "Quiche Lorraine",
        servings: 6,
        allergens: ["gluten", "eggs", "milk"],
        diet_flags: { vegetarian: false, vegan: false, gluten_free: false, dairy_free: false },
        created_at: expect.any(String),
      },
    ]);
  });
});

describe("GET /v1/recipes/{id}", () => {
  it("includes the ingredients in recipe order with exact quantities", async () => {
    const response = await api.call("GET", `/v1/recipes/${quiche}`, { key: org.readKey });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: quiche, name: "Quiche Lorraine", allergens: ["gluten", "eggs", "milk"] });
    expect(response.body.ingredients).toEqual([
      { id: expect.any(Number), name: "Pastry", quantity: 1, unit: "piece" },
      { id: expect.any(Number), name: "Cream", quantity: 0.25, unit: "l" },
      { id: expect.any(Number), name: "Bacon", quantity: 200, unit: "g" },
      { id: expect.any(Number), name: "Nutmeg", quantity: 0.125, unit: "pinch" },
    ]);
  });

  it("shows an empty ingredients array for a recipe without ingredients", async () => {
    const response = await api.call("GET", `/v1/recipes/${salad}`, { key: org.readKey });
    expect(response.status).toBe(200);
    expect(response.body.ingredients).toEqual([]);
    expect(response.body.diet_flags).toEqual({ vegetarian: true, vegan: true, gluten_free: true, dairy_free: true });
  });

  it("agrees with the list form on every list field", async () => {
    const list = await api.call("GET", "/v1/recipes", { key: org.readKey });
    const detail = await api.call("GET", `/v1/recipes/${quiche}`, { key: org.readKey });
    expect(list.status).toBe(200);
    expect(detail.status).toBe(200);
    const { ingredients: _ingredients, ...listFields } = detail.body;
    expect(listFields).toEqual(list.body.data.find((recipe: any) => recipe.id === quiche));
  });
});

describe("recipes are read only", () => {
  it.each(["POST", "PUT", "PATCH", "DELETE"])("%s /v1/recipes → 404 Unknown endpoint", async (method) => {
    const response = await api.call(method, "/v1/recipes", { key: org.writeKey, body: { name: "New" } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: "Unknown endpoint" });
  });
});
