import type { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { ListItem, ListParams, Recipe, RecipeDetail, ResponseBody } from "../types.ts";
import { listOf, recordPath } from "./list-and-create.ts";

/** `platter.recipes`: dishes the kitchen can make, by name. */
export class RecipesResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** `GET /recipes`, every page: iterate with `for await`. */
  list(params?: ListParams): PageList<Recipe> {
    return listOf<ListItem<"listRecipes">>(this.#transport, "/recipes", params);
  }

  /** `GET /recipes/{id}`: one recipe with its ingredients. */
  retrieve(id: number): Promise<RecipeDetail> {
    return this.#transport.request<ResponseBody<"getRecipe", 200>>({ method: "GET", path: recordPath("/recipes", id) });
  }
}
