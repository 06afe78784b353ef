import {
  type ListPage, type NotFound, type OrgScope, type PageRequest, type Recipe, type RecipeDetail, recipeListing, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { orgSql, sql } from "../org-sql.ts";

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
// Ingredients come with the recipe (one round trip), within the recipe's organization.
const DETAIL_COLUMNS = `${COLUMNS},
    coalesce((select json_agg(json_build_object('id', i.id, 'name', i.name, 'quantity', i.quantity::float8,
        'unit', i.unit) order by i.position, i.id)
      from ingredients i where i.recipe_id = r.id and i.organization_id = r.organization_id), '[]') as ingredients`;

const toRecipe = (row: RecipeRow): Recipe => ({
  id: Number(row.id),
  name: row.name,
  servings: row.servings,
  allergens: row.allergens,
  diet_flags: { vegetarian: row.vegetarian, vegan: row.vegan, gluten_free: row.gluten_free, dairy_free: row.dairy_free },
  created_at: row.created_at,
});

export class RecipeRepository extends Context.Service<
  RecipeRepository,
  {
    readonly list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<Recipe>, DatabaseUnavailable>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<RecipeDetail, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/RecipeRepository") {
  static readonly layer = Layer.effect(
    RecipeRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return RecipeRepository.of({
        list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            recipeListing,
            { columns: COLUMNS, from: "recipes", as: "r", keyColumns: ["r.name", "r.id"], keyCasts: ["text", "bigint"] },
            page,
            toRecipe,
          ),
        get: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const row = yield* orgSql(database, scope).one<RecipeDetailRow>({
            columns: DETAIL_COLUMNS,
            from: "recipes",
            as: "r",
            where: sql`r.id = ${id}`,
          });
          return { ...toRecipe(row), ingredients: row.ingredients };
        }),
      });
    }),
  );
}
