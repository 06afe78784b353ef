import { Schema } from "effect";
import { CursorId, CursorName } from "../cursor-keys.ts";
import type { Listing } from "../pagination.ts";

/** Recipe: a dish the kitchen can make, its allergens, diet flags and ingredients. */

/** The 14 allergens regulated in the EU (Regulation 1169/2011, Annex II). */
export const ALLERGENS = [
  "celery", "gluten", "crustaceans", "eggs", "fish", "lupin", "milk", "molluscs", "mustard",
  "peanuts", "sesame", "soybeans", "sulphites", "tree_nuts",
] as const;
export type Allergen = (typeof ALLERGENS)[number];

export const DIET_FLAGS = ["vegetarian", "vegan", "gluten_free", "dairy_free"] as const;
export type DietFlag = (typeof DIET_FLAGS)[number];

export const UNITS = ["g", "kg", "ml", "l", "piece", "tsp", "tbsp", "bunch", "pinch"] as const;

export const DietFlags = Schema.Struct({
  vegetarian: Schema.Boolean,
  vegan: Schema.Boolean,
  gluten_free: Schema.Boolean,
  dairy_free: Schema.Boolean,
});

export const Recipe = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  servings: Schema.Int,
  allergens: Schema.Array(Schema.Literals(ALLERGENS)),
  diet_flags: DietFlags,
  created_at: Schema.String,
});
export type Recipe = typeof Recipe.Type;

export const Ingredient = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  quantity: Schema.Finite,
  unit: Schema.Literals(UNITS),
});
export type Ingredient = typeof Ingredient.Type;

export const RecipeDetail = Schema.Struct({ ...Recipe.fields, ingredients: Schema.Array(Ingredient) });
export type RecipeDetail = typeof RecipeDetail.Type;

/** By name, ties by id. */
export const recipeListing: Listing<Recipe, readonly [string, number]> = {
  endpoint: "recipes",
  direction: "asc",
  cursorKey: Schema.Tuple([CursorName, CursorId]),
  keyOf: (recipe) => [recipe.name, recipe.id],
};
