import { type Recipe, type RecipeDetail, RecipeRepository, recipeListing } from "@platter/domain";
import { Effect, Layer } from "effect";
import type { Orm } from "../database.ts";
import { isoTimestamp, readKeysetPage, scopedSql } from "../scoped-sql.ts";

/** Recipes: keyset list by name and id with allergens and diet flags, detail with ingredients. */

interface RecipeRow {
  id: string;
  name: string;
  servings: number;
  allergens: Recipe["allergens"];
  vegetarian: boolean;
  vegan: boolean;
  gluten_free: boolean;
  dairy_free: boolean;
  created_at: string;
}

interface RecipeDetailRow extends RecipeRow {
  ingredients: RecipeDetail["ingredients"];
}

const COLUMNS = `r.id, r.name, r.servings, r.allergens, r.vegetarian, r.vegan, r.gluten_free, r.dairy_free,
  ${isoTimestamp("r.created_at")} as created_at`;
const SELECT = `select ${COLUMNS} from recipes r where r.organization_id = ?`;
const SELECT_DETAIL = `select ${COLUMNS},
    coalesce((select json_agg(json_build_object('id', i.id, 'name', i.name, 'quantity', i.quantity::float8,
        'unit', i.unit) order by i.position, i.id)
      from ingredients i where i.recipe_id = r.id and i.organization_id = r.organization_id), '[]') as ingredients
  from recipes r where r.organization_id = ? and r.id = ?`;

const toRecipe = (row: RecipeRow): Recipe => ({
  id: Number(row.id),
  name: row.name,
  servings: row.servings,
  allergens: row.allergens,
  diet_flags: { vegetarian: row.vegetarian, vegan: row.vegan, gluten_free: row.gluten_free, dairy_free: row.dairy_free },
  created_at: row.created_at,
});

export const makeRecipeRepository = (orm: Orm): RecipeRepository["Service"] => ({
  list: (scope, page) =>
    readKeysetPage(
      scopedSql(orm, scope),
      recipeListing,
      { select: SELECT, keyColumns: ["r.name", "r.id"], keyCasts: ["text", "bigint"] },
      page,
      toRecipe,
    ),
  get: (scope, id) =>
    Effect.map(scopedSql(orm, scope).one<RecipeDetailRow>(SELECT_DETAIL, [id]), (row) => ({
      ...toRecipe(row),
      ingredients: row.ingredients,
    })),
});

export const RecipeRepositoryLive = (orm: Orm) => Layer.succeed(RecipeRepository, makeRecipeRepository(orm));
