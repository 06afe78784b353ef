import { type EventManifest, type ManifestOptions, readManifest } from "../manifest.ts";
import type { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { CreateOptions, Created, Event, EventCreate, EventDetail, ListItem, ListParams, RequestBody, ResponseBody } from "../types.ts";
import { createIn, listOf, recordPath } from "./list-and-create.ts";
import type { RecipesResource } from "./recipes.ts";

/** `platter.events`: catered occasions, newest first. */
export class EventsResource {
  readonly #transport: Transport;
  readonly #recipes: RecipesResource;

  constructor(transport: Transport, recipes: RecipesResource) {
    this.#transport = transport;
    this.#recipes = recipes;
  }

  /** `GET /events`, every page: iterate with `for await`. */
  list(params?: ListParams): PageList<Event> {
    return listOf<ListItem<"listEvents">>(this.#transport, "/events", params);
  }

  /** `GET /events/{id}`: one event with its dishes. */
  retrieve(id: number): Promise<EventDetail> {
    return this.#transport.request<ResponseBody<"getEvent", 200>>({ method: "GET", path: recordPath("/events", id) });
  }

  /**
   * The event's dishes with each recipe's allergens and diet flags, for kitchen and label systems:
   * `GET /events/{id}`, then `GET /recipes/{id}` once per distinct recipe, `concurrency` at a time.
   * A missing event is a `NotFoundError`; a dish whose recipe answers 404 is a `MissingRecipeError`.
   */
  manifest(id: number, options?: ManifestOptions): Promise<EventManifest> {
    return readManifest(id, { event: (eventId) => this.retrieve(eventId), recipe: (recipeId) => this.#recipes.retrieve(recipeId) }, options);
  }

  /** `POST /events` (read/write key): creates an event; answers its `id`. */
  create(input: EventCreate, options?: CreateOptions): Promise<Created> {
    return createIn<RequestBody<"createEvent">>(this.#transport, "/events", input, options);
  }
}
