import { ClientsResource } from "./resources/clients.ts";
import { EventsResource } from "./resources/events.ts";
import { InvoicesResource } from "./resources/invoices.ts";
import { MeResource } from "./resources/me.ts";
import { MessagesResource } from "./resources/messages.ts";
import { RecipesResource } from "./resources/recipes.ts";
import { Transport } from "./transport.ts";

/** How to reach the API. */
export interface PlatterOptions {
  /** An API key: `platter_ro_…` (read-only) or `platter_rw_…` (read/write); a sandbox's are `platter_test_ro_…` / `platter_test_rw_…`. */
  readonly apiKey: string;
  /** The base URL, including the version segment: `https://…/v1`. */
  readonly baseUrl: string;
  /** Retries of a failed safe request (connection failure, timeout, 429, 5xx). Default 2; 0 disables them. */
  readonly maxRetries?: number;
  /** Time limit of one attempt, response body included, in milliseconds. Default 30 000. */
  readonly timeoutMs?: number;
  /**
   * The Developer area's origin (`https://developers.…`), for `messages`: the message feed is served
   * there, with the same key, as `platter listen` is. Optional otherwise.
   */
  readonly developerAreaUrl?: string;
  /** A `fetch` to use instead of the global one (a proxy-aware one, or one with instrumentation). */
  readonly fetch?: typeof globalThis.fetch;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The Platter API client. One per API key; it holds no connection of its own, so create it once
 * and share it.
 *
 * ```ts
 * const platter = new Platter({ apiKey: process.env.PLATTER_API_KEY!, baseUrl: "https://…/v1" });
 * for await (const event of platter.events.list()) console.log(event.name);
 * ```
 */
export class Platter {
  /** The organization of the API key. */
  readonly me: MeResource;
  /** Events: list, retrieve, create, and `manifest` (dishes with their recipes' allergens and diet flags). */
  readonly events: EventsResource;
  /** Recipes: list, retrieve. */
  readonly recipes: RecipesResource;
  /** Clients: list, create. */
  readonly clients: ClientsResource;
  /** Invoices: list, retrieve. */
  readonly invoices: InvoicesResource;
  /** The webhook messages to pull, oldest first from a cursor (needs `developerAreaUrl`). */
  readonly messages: MessagesResource;

  constructor(options: PlatterOptions) {
    const { apiKey, baseUrl, developerAreaUrl, maxRetries = DEFAULT_MAX_RETRIES, timeoutMs = DEFAULT_TIMEOUT_MS } = options ?? {};
    if (typeof apiKey !== "string" || apiKey.trim() === "") throw new TypeError("Platter: `apiKey` is required");
    if (typeof baseUrl !== "string" || !/^https?:\/\//i.test(baseUrl)) {
      throw new TypeError("Platter: `baseUrl` is required: the API's http(s) URL including the version segment, e.g. https://…/v1");
    }
    if (developerAreaUrl !== undefined && (typeof developerAreaUrl !== "string" || !/^https?:\/\//i.test(developerAreaUrl))) {
      throw new TypeError("Platter: `developerAreaUrl` must be the Developer area's http(s) origin, e.g. https://developers.example.com");
    }
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new TypeError("Platter: `maxRetries` must be a whole number ≥ 0");
    // Timers cannot wait longer than 2^31-1 ms; a larger value would fire at once.
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2_147_483_647)) {
      throw new TypeError("Platter: `timeoutMs` must be a positive number of milliseconds, at most 2147483647");
    }
    const fetch = options.fetch ?? globalThis.fetch;
    if (typeof fetch !== "function") throw new TypeError("Platter: no global `fetch`: use Node.js 18 or newer, or pass `fetch`");
    const transport = new Transport({ apiKey, baseUrl: baseUrl.replace(/\/+$/, ""), maxRetries, timeoutMs, fetch });
    this.me = new MeResource(transport);
    this.recipes = new RecipesResource(transport);
    this.events = new EventsResource(transport, this.recipes);
    this.clients = new ClientsResource(transport);
    this.invoices = new InvoicesResource(transport);
    this.messages = new MessagesResource(developerAreaUrl === undefined
      ? undefined
      : new Transport({ apiKey, baseUrl: developerAreaUrl.replace(/\/+$/, ""), maxRetries, timeoutMs, fetch }));
  }
}
