import type { components, operations } from "./generated/api-types.ts";

/**
 * The records and inputs of the API, named. Every type here is derived from the generated
 * OpenAPI types (`./generated/api-types.ts`), which are generated from the server's own Schemas.
 */

type Schemas = components["schemas"];

/** The JSON body of an operation's response with status `Status`. */
export type ResponseBody<Operation extends keyof operations, Status extends keyof operations[Operation]["responses"]> =
  operations[Operation]["responses"][Status] extends { content: { "application/json": infer Body } } ? Body : never;

/** The record type of a list operation's `data`. */
export type ListItem<Operation extends keyof operations> =
  operations[Operation]["responses"] extends { 200: { content: { "application/json": { data: Array<infer Item> } } } } ? Item : never;

/** The JSON request body of an operation. */
export type RequestBody<Operation extends keyof operations> =
  operations[Operation]["requestBody"] extends { content: { "application/json": infer Body } } | undefined ? Body : never;

/** The caller's organization (`GET /me`). */
export type Organization = Schemas["Organization"];
/** An event as listed. */
export type Event = Schemas["Event"];
/** An event with its dishes (`GET /events/{id}`). */
export type EventDetail = Schemas["EventDetail"];
/** One dish of an event. */
export type Dish = Schemas["Dish"];
/** The body of `POST /events`: only `name` is required. */
export type EventCreate = Schemas["EventCreate"];
/** A recipe as listed, with allergens and diet flags. */
export type Recipe = Schemas["Recipe"];
/** A recipe with its ingredients (`GET /recipes/{id}`). */
export type RecipeDetail = Schemas["RecipeDetail"];
/** One ingredient of a recipe. */
export type Ingredient = Schemas["Ingredient"];
/** A client. */
export type Client = Schemas["Client"];
/** The body of `POST /clients`: only `name` is required. */
export type ClientCreate = Schemas["ClientCreate"];
/** An invoice as listed, with computed totals. */
export type Invoice = Schemas["Invoice"];
/** An invoice with its line items (`GET /invoices/{id}`). */
export type InvoiceDetail = Schemas["InvoiceDetail"];
/** One line item of an invoice. */
export type LineItem = Schemas["LineItem"];
/** The answer to a create: the new record's id. */
export type Created = Schemas["Created"];
/**
 * A signed webhook delivery's body: a union discriminated on `type`, so `data` is typed per type
 * (`if (event.type === "invoice.paid") event.data.balance_due`). One member per event type, as
 * the domain lists them (the `WebhookEnvelope` component of the OpenAPI document).
 */
export type WebhookEvent = Schemas["WebhookEnvelope"];
/** The type of a webhook event (`event.created`, `invoice.paid`, …). */
export type WebhookEventType = WebhookEvent["type"];

/** One page of a list: the list envelope of every list endpoint. */
export interface ListPage<Item> {
  readonly data: Item[];
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

/** Query parameters of every list endpoint: `limit` is the page size (1–500, default 100); `cursor` starts after a page. */
export type ListParams = NonNullable<operations["listEvents"]["parameters"]["query"]>;

/** Options of a create. */
export interface CreateOptions {
  /**
   * Sent as the `Idempotency-Key` header: a create with the same key and body within 24 hours
   * is answered once. The SDK generates a random key when you pass none, so its own retries are
   * always safe; pass your own to make retries across processes safe too (e.g. your order id).
   */
  readonly idempotencyKey?: string;
}

/**
 * One message of the feed (`platter.messages.list`): the envelope exactly as its deliveries send it
 * (`body`, the bytes a receiver's signature covers; `null` for a message this server cannot read),
 * parsed (`envelope`), and the `cursor` to resume after it.
 */
export interface FeedMessage {
  /** The envelope's id (`evt_…`), the same as the `webhook-id` its deliveries carry. */
  readonly id: string;
  readonly type: WebhookEventType;
  /** When the message was made (ISO 8601 UTC with milliseconds). */
  readonly created_at: string;
  readonly body: string | null;
  readonly envelope: WebhookEvent | null;
  /** Pass as `after` to read the messages made after this one. */
  readonly cursor: string;
}

/** Where `platter.messages.list` starts and what it reads. */
export interface MessageFeedParams {
  /** A message's `cursor`: read the messages after it (a receiver's last one). */
  readonly after?: string;
  /** Without `after`: the first message made at or after this time; without either, the oldest one kept. */
  readonly since?: Date | string;
  /** Only these event types. */
  readonly types?: ReadonlyArray<WebhookEventType>;
  /** Messages per request (at most 500; default 100). */
  readonly limit?: number;
}
