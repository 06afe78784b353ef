import { MissingRecipeError, NotFoundError } from "./errors.ts";
import type { Dish, Event, EventDetail, Recipe, RecipeDetail } from "./types.ts";

/**
 * An event's manifest for kitchen and label systems, assembled from the public endpoints: the
 * event with its dishes, then each distinct recipe once, a few at a time, through the client's
 * transport (so its timeout, retries and typed errors apply to every request).
 */

/** An allergen a recipe declares: one of the 14 regulated in the EU (`"gluten"`, `"milk"`, …). */
export type Allergen = Recipe["allergens"][number];

/** A recipe's diet flags: `vegetarian`, `vegan`, `gluten_free`, `dairy_free`. */
export type DietFlags = Recipe["diet_flags"];

/** One dish of a manifest: the dish as the event lists it, with its recipe's allergens and diet flags. */
export interface ManifestDish extends Dish {
  /** The recipe's allergens, as the recipe lists them. */
  readonly allergens: Allergen[];
  /** The recipe's diet flags. */
  readonly diet_flags: DietFlags;
}

/** What `events.manifest(id)` answers. */
export interface EventManifest {
  /** The event, without its dishes. */
  readonly event: Event;
  /** The dishes in the event's order; `recipe_name` is the name read with the recipe's allergens. */
  readonly dishes: ManifestDish[];
  /** Every allergen of any dish, once each, sorted by name. */
  readonly allergens: Allergen[];
  /** Each flag is true when every dish's recipe has it; all are false for an event without dishes. */
  readonly diet_flags: DietFlags;
}

/** Options of `events.manifest`. */
export interface ManifestOptions {
  /** How many recipe requests may run at once: a whole number ≥ 1. Default 4. */
  readonly concurrency?: number;
}

const DEFAULT_CONCURRENCY = 4;

/** Every flag false: what an event without dishes claims. Typed as `DietFlags`, so a new flag does not compile until listed. */
const NO_FLAGS: DietFlags = { vegetarian: false, vegan: false, gluten_free: false, dairy_free: false };

/** The flags every dish has. */
const flagsOfEvery = (dishes: ReadonlyArray<ManifestDish>): DietFlags => {
  const flags = { ...NO_FLAGS };
  if (dishes.length === 0) return flags;
  for (const flag of Object.keys(flags) as Array<keyof DietFlags>) flags[flag] = dishes.every((dish) => dish.diet_flags[flag]);
  return flags;
};

/**
 * Calls `fetchOne` for every id, at most `concurrency` at a time. After the first failure no
 * request starts; the ones under way are waited for, then that failure is thrown.
 */
const fetchEach = async <Result>(ids: ReadonlyArray<number>, concurrency: number, fetchOne: (id: number) => Promise<Result>) => {
  const results = new Map<number, Result>();
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < ids.length) {
      const id = ids[next++]!;
      try {
        results.set(id, await fetchOne(id));
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
  if (failure !== undefined) throw failure.error;
  return results;
};

/** Reads the event, then each distinct recipe of its dishes once, and assembles the manifest. */
export const readManifest = async (
  eventId: number,
  read: { readonly event: (id: number) => Promise<EventDetail>; readonly recipe: (id: number) => Promise<RecipeDetail> },
  options: ManifestOptions = {},
): Promise<EventManifest> => {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw new TypeError("manifest: `concurrency` must be a whole number ≥ 1");
  const { dishes, ...event } = await read.event(eventId);
  const dishIdsOf = new Map<number, number[]>();
  for (const dish of dishes) dishIdsOf.set(dish.recipe_id, [...(dishIdsOf.get(dish.recipe_id) ?? []), dish.id]);
  const recipes = await fetchEach([...dishIdsOf.keys()], concurrency, (recipeId) =>
    read.recipe(recipeId).catch((error: unknown) => {
      throw error instanceof NotFoundError ? new MissingRecipeError(eventId, recipeId, dishIdsOf.get(recipeId)!, error) : error;
    }),
  );
  const manifestDishes = dishes.map((dish): ManifestDish => {
    const recipe = recipes.get(dish.recipe_id)!;
    return { ...dish, recipe_name: recipe.name, allergens: recipe.allergens, diet_flags: recipe.diet_flags };
  });
  return {
    event,
    dishes: manifestDishes,
    allergens: [...new Set(manifestDishes.flatMap((dish) => dish.allergens))].sort(),
    diet_flags: flagsOfEvery(manifestDishes),
  };
};
