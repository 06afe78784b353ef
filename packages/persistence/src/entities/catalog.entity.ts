import { defineEntity, p } from "@mikro-orm/postgresql";

/** Clients and recipes (with ingredients): the catalogue events and invoices refer to. */

export const ClientEntity = defineEntity({
  name: "Client",
  tableName: "clients",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    name: p.text(),
    email: p.text().nullable(),
    phone: p.text().nullable(),
    company: p.text().nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const RecipeEntity = defineEntity({
  name: "Recipe",
  tableName: "recipes",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    name: p.text(),
    servings: p.integer(),
    allergens: p.array().columnType("text[]"),
    vegetarian: p.boolean(),
    vegan: p.boolean(),
    glutenFree: p.boolean(),
    dairyFree: p.boolean(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const IngredientEntity = defineEntity({
  name: "Ingredient",
  tableName: "ingredients",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    recipeId: p.bigint("number"),
    position: p.integer(),
    name: p.text(),
    quantity: p.decimal("number").precision(12).scale(3),
    unit: p.text(),
  },
});
