import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { OrganizationEntity } from "./organization.entity.ts";

/** Clients and recipes (with ingredients): the catalogue events and invoices refer to. */

export const ClientEntity = defineEntity({
  name: "Client",
  tableName: "clients",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    name: p.text().collation("C"),
    email: p.text().nullable(),
    phone: p.text().nullable(),
    company: p.text().nullable(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  indexes: [{ name: "clients_keyset_idx", properties: ["organization", "name", "id"] }],
});

export const RecipeEntity = defineEntity({
  name: "Recipe",
  tableName: "recipes",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    name: p.text().collation("C"),
    servings: p.integer(),
    allergens: p.array().columnType("text[]").defaultRaw("'{}'"),
    vegetarian: p.boolean().default(false),
    vegan: p.boolean().default(false),
    glutenFree: p.boolean().default(false),
    dairyFree: p.boolean().default(false),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  indexes: [{ name: "recipes_keyset_idx", properties: ["organization", "name", "id"] }],
  checks: [{ name: "recipes_servings_check", expression: "servings > 0" }],
});

export const IngredientEntity = defineEntity({
  name: "Ingredient",
  tableName: "ingredients",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    recipe: p.manyToOne(RecipeEntity),
    position: p.integer(),
    name: p.text(),
    quantity: p.decimal("number").precision(12).scale(3),
    unit: p.text(),
  },
  indexes: [{ name: "ingredients_recipe_idx", properties: ["recipe", "position"] }],
  checks: [{ name: "ingredients_quantity_check", expression: "quantity >= 0" }],
});
