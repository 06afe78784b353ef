import {
  Client, ClientCreate, DEFAULT_LIMIT, DietFlags, Dish, Event, EventCreate, EventDetail, Ingredient, Invoice, InvoiceDetail,
  InvoiceMessageData, LineItem, MAX_LIMIT, MESSAGE_EXAMPLES, MESSAGE_TYPES, type MessageType, Organization, Proposal, Recipe,
  RecipeDetail, WEBHOOK_ENVELOPES, WebhookEnvelope, type WebhookEventType,
} from "@platter/domain";
import { JsonSchema, Schema, SchemaRepresentation } from "effect";

/**
 * The OpenAPI 3.1 description of the public API v1. Component schemas are generated from the
 * domain's effect Schemas (the same ones the API decodes and answers with), so the document, and
 * the SDK types generated from it, cannot drift from what the server does.
 */

/** An OpenAPI 3.1 document, typed as far as this module needs. */
export interface OpenApiDocument {
  readonly openapi: "3.1.0";
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers: ReadonlyArray<{ readonly url: string; readonly description: string }>;
  readonly security: ReadonlyArray<Record<string, ReadonlyArray<string>>>;
  readonly paths: Record<string, Record<string, unknown>>;
  readonly webhooks: Record<string, Record<string, unknown>>;
  readonly components: {
    readonly schemas: JsonSchema.Definitions;
    readonly parameters: Record<string, unknown>;
    readonly headers: Record<string, unknown>;
    readonly responses: Record<string, unknown>;
    readonly securitySchemes: Record<string, unknown>;
  };
}

/** `event.created` → `EventCreatedMessage`: the component name of a type's envelope. */
const envelopeName = (type: WebhookEventType): string =>
  `${type.split(".").map((word) => word[0]!.toUpperCase() + word.slice(1)).join("")}Message`;

/** The list envelope of every list endpoint (`ListPage` in the domain). */
const listEnvelope = <Row extends Schema.Top>(row: Row) =>
  Schema.Struct({ data: Schema.Array(row), has_more: Schema.Boolean, next_cursor: Schema.NullOr(Schema.String) });

/** Every response shape, by component name. Nested shapes are named too so they become `$ref`s. */
const COMPONENTS: ReadonlyArray<readonly [string, Schema.Top]> = [
  ["Organization", Organization],
  ["Event", Event],
  ["EventDetail", EventDetail],
  ["Dish", Dish],
  ["EventCreate", EventCreate],
  ["EventList", listEnvelope(Event)],
  ["Recipe", Recipe],
  ["RecipeDetail", RecipeDetail],
  ["DietFlags", DietFlags],
  ["Ingredient", Ingredient],
  ["RecipeList", listEnvelope(Recipe)],
  ["Client", Client],
  ["ClientCreate", ClientCreate],
  ["ClientList", listEnvelope(Client)],
  ["Invoice", Invoice],
  ["InvoiceDetail", InvoiceDetail],
  ["LineItem", LineItem],
  ["InvoiceList", listEnvelope(Invoice)],
  ["Created", Schema.Struct({ id: Schema.Int })],
  ["Error", Schema.Struct({ error: Schema.String })],
  ["WebhookEnvelope", WebhookEnvelope],
  ["InvoiceMessageData", InvoiceMessageData],
  ["Proposal", Proposal],
  ...MESSAGE_TYPES.map(({ type }) => [envelopeName(type), WEBHOOK_ENVELOPES[type]] as const),
];

/**
 * JSON Schemas of the components, sharing one definitions pool. References are allocated by
 * schema identity (the nested `Dish` inside `EventDetail` is the domain's `Dish`), not by
 * annotations, so the domain needs no OpenAPI-specific annotations.
 */
const componentSchemas = (): JsonSchema.Definitions => {
  const encoded = COMPONENTS.map(([name, schema]) => [name, Schema.toCodecJson(schema).ast] as const);
  const nameOf = new Map<unknown, string>(encoded.map(([name, ast]) => [ast, name]));
  const [first, ...rest] = encoded.map(([, ast]) => ast);
  const representations = SchemaRepresentation.toRepresentations([first!, ...rest], {
    referencePolicy: ({ ast }) => nameOf.get(ast),
  });
  const jsonSchemas = SchemaRepresentation.toJsonSchemaMultiDocument(representations, { onExcessProperty: "error" });
  const openApi = JsonSchema.toMultiDocumentOpenApi3_1(jsonSchemas);
  // Keep the component order of COMPONENTS, so the document reads top-down and diffs stay small.
  return Object.fromEntries(COMPONENTS.map(([name]) => [name, openApi.definitions[name]!]));
};

const ref = (kind: "schemas" | "parameters" | "headers" | "responses", name: string) => ({ $ref: `#/components/${kind}/${name}` });

const json = (schema: string) => ({ "application/json": { schema: ref("schemas", schema) } });

/** Where a key stands against its rate limits: on every answer to a request with a key. */
const RATE_LIMIT_HEADERS = { "ratelimit-policy": ref("headers", "RateLimitPolicy"), ratelimit: ref("headers", "RateLimit") };

const ok = (description: string, schema: string) => ({
  description,
  headers: { "x-request-id": ref("headers", "RequestId"), ...RATE_LIMIT_HEADERS },
  content: json(schema),
});

const READ_ERRORS = {
  401: ref("responses", "Unauthenticated"),
  429: ref("responses", "RateLimited"),
  500: ref("responses", "ServerError"),
  503: ref("responses", "Unavailable"),
};
const LIST_ERRORS = { 400: ref("responses", "InvalidCursor"), ...READ_ERRORS };
const DETAIL_ERRORS = { ...READ_ERRORS, 404: ref("responses", "NotFound") };
const CREATE_ERRORS = {
  400: ref("responses", "InvalidInput"),
  ...READ_ERRORS,
  403: ref("responses", "ReadOnlyKey"),
  409: ref("responses", "IdempotencyKeyInProgress"),
  413: ref("responses", "PayloadTooLarge"),
  415: ref("responses", "UnsupportedMediaType"),
  422: ref("responses", "IdempotencyKeyReused"),
};

const listOperation = (operationId: string, summary: string, list: string) => ({
  operationId,
  summary,
  parameters: [ref("parameters", "Limit"), ref("parameters", "Cursor")],
  responses: { 200: ok("One page of the list.", list), ...LIST_ERRORS },
});

const retrieveOperation = (operationId: string, summary: string, detail: string) => ({
  operationId,
  summary,
  parameters: [ref("parameters", "RecordId")],
  responses: { 200: ok("The record.", detail), ...DETAIL_ERRORS },
});

const createOperation = (operationId: string, summary: string, input: string) => ({
  operationId,
  summary,
  parameters: [ref("parameters", "IdempotencyKey")],
  requestBody: { required: true, content: json(input) },
  responses: {
    201: {
      description: "Created. Read the record with its id. A replay of an idempotent request answers the first response again.",
      headers: {
        "x-request-id": ref("headers", "RequestId"),
        ...RATE_LIMIT_HEADERS,
        location: { description: "Path of the new record.", schema: { type: "string" } },
        "idempotent-replayed": {
          description: "`true` when this is the stored response of an earlier request with the same Idempotency-Key.",
          schema: { type: "string", enum: ["true"] },
        },
      },
      content: json("Created"),
    },
    ...CREATE_ERRORS,
  },
});

const errorResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { "x-request-id": ref("headers", "RequestId"), ...headers },
  content: json("Error"),
});

const RETRY_AFTER = { "retry-after": ref("headers", "RetryAfter") };

/** The POST a registered endpoint receives for one event type, with its envelope schema and an example. */
const webhookOperation = ({ type, description }: MessageType<WebhookEventType>) => ({
  post: {
    operationId: `receive${envelopeName(type)}`,
    // A plain summary: renderers show it as a title, where Markdown is not rendered.
    summary: `${type}: ${description}`,
    description:
      `A business event, POSTed to each endpoint registered in the application that subscribes to \`${type}\`. ` +
      "It is signed the Standard Webhooks way: verify `webhook-signature` over `webhook-id`, `webhook-timestamp` and the raw body " +
      "with the endpoint's signing secret (any Standard Webhooks library does it) before parsing it, and use `webhook-id` to " +
      "deduplicate. `x-platter-signature` carries a plain HMAC of the body as well.",
    security: [],
    parameters: [
      {
        name: "x-platter-signature",
        in: "header",
        required: true,
        description: "Lowercase hex HMAC-SHA256 of the raw request body, keyed with the endpoint's signing secret.",
        schema: { type: "string", pattern: "^[0-9a-f]{64}$" },
      },
      {
        name: "webhook-id",
        in: "header",
        required: true,
        description: "The envelope id; the same on every retry of one delivery, so receivers can deduplicate.",
        schema: { type: "string" },
      },
      {
        name: "webhook-timestamp",
        in: "header",
        required: true,
        description: "Unix seconds of this attempt; part of what `webhook-signature` signs.",
        schema: { type: "string", pattern: "^[0-9]+$" },
      },
      {
        name: "webhook-signature",
        in: "header",
        required: true,
        description:
          "`v1,` and the base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes the secret's " +
          "base64 part encodes; while a rotated secret's previous one still signs, both signatures, space-separated.",
        schema: { type: "string" },
      },
    ],
    requestBody: {
      required: true,
      content: { "application/json": { schema: ref("schemas", envelopeName(type)), example: MESSAGE_EXAMPLES[type] } },
    },
    responses: { 200: { description: "Any 2xx acknowledges the delivery." } },
  },
});

/** Builds the OpenAPI 3.1 document of the public API v1. Deterministic: same domain, same bytes. */
export const buildOpenApiDocument = (): OpenApiDocument => ({
  openapi: "3.1.0",
  info: {
    title: "Platter API",
    version: "1.0.0",
    description:
      "The public REST API of Platter, read and create only. Every request carries `Authorization: Bearer <API key>`; " +
      "every response is JSON and carries `x-request-id`. Errors are `{\"error\": string}`. Lists are keyset-paginated: " +
      "pass `next_cursor` back as `cursor` while `has_more` is true.",
  },
  servers: [{ url: "http://localhost:3000/v1", description: "A local `npm start`; the base URL always ends with the version segment." }],
  security: [{ bearer: [] }],
  paths: {
    "/me": {
      get: { operationId: "getMe", summary: "The organization of the API key.", responses: { 200: ok("The organization.", "Organization"), ...READ_ERRORS } },
    },
    "/events": {
      get: listOperation("listEvents", "Events, newest first.", "EventList"),
      post: createOperation("createEvent", "Creates an event (read/write key).", "EventCreate"),
    },
    "/events/{id}": { get: retrieveOperation("getEvent", "One event with its dishes.", "EventDetail") },
    "/recipes": { get: listOperation("listRecipes", "Recipes by name, ties by id.", "RecipeList") },
    "/recipes/{id}": { get: retrieveOperation("getRecipe", "One recipe with its ingredients.", "RecipeDetail") },
    "/clients": {
      get: listOperation("listClients", "Clients by name, ties by id.", "ClientList"),
      post: createOperation("createClient", "Creates a client (read/write key).", "ClientCreate"),
    },
    "/invoices": { get: listOperation("listInvoices", "Invoices, newest first, with computed totals.", "InvoiceList") },
    "/invoices/{id}": { get: retrieveOperation("getInvoice", "One invoice with its line items.", "InvoiceDetail") },
  },
  webhooks: Object.fromEntries(MESSAGE_TYPES.map((messageType) => [messageType.type, webhookOperation(messageType)])),
  components: {
    schemas: componentSchemas(),
    parameters: {
      Limit: {
        name: "limit",
        in: "query",
        required: false,
        description: `Page size, 1 to ${MAX_LIMIT}; ${DEFAULT_LIMIT} when absent, zero, negative or not a number; larger values are capped.`,
        schema: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
      },
      Cursor: {
        name: "cursor",
        in: "query",
        required: false,
        description: "The `next_cursor` of the previous page, passed back unchanged. Opaque; valid indefinitely.",
        schema: { type: "string" },
      },
      RecordId: { name: "id", in: "path", required: true, schema: { type: "integer", minimum: 1 } },
      IdempotencyKey: {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description:
          "Makes the create safe to retry for 24 hours: the same key with the same body replays the first response " +
          "(with `Idempotent-Replayed: true`); with a different body it is a 422; while the first request runs, a 409.",
        schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7e]+$" },
      },
    },
    headers: {
      RequestId: { description: "Identifies the request in the service's logs: quote it in support requests.", schema: { type: "string" } },
      RateLimitPolicy: {
        description: "The rate limits that apply (IETF RateLimit headers; quota q per window of w seconds): the organization's `\"requests\";q=200;w=2` (all its keys together), on a create also `\"creates\";q=40;w=2`, and the key's own `\"key\";q=200;w=2`; on a 429 for failed authentications, the client address's `\"failed-auth\";q=20;w=60`.",
        schema: { type: "string" },
      },
      RateLimit: {
        description: "Where the caller stands against its tightest limit (on a 429, the one that refused it): `\"requests\";r=<requests left>;t=<seconds until the window resets>`.",
        schema: { type: "string" },
      },
      RetryAfter: { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 1 } },
    },
    responses: {
      InvalidInput: errorResponse("The body is not a valid create input (the text names the field: `name is required`), or the Idempotency-Key is malformed."),
      InvalidCursor: errorResponse("`Invalid cursor`: corrupted, altered or issued by another endpoint."),
      Unauthenticated: errorResponse("No API key, a malformed key or a revoked key."),
      ReadOnlyKey: errorResponse("A read-only key used for a create."),
      NotFound: errorResponse("No such record in the key's organization, or `Unknown endpoint`."),
      IdempotencyKeyInProgress: errorResponse("The first request with this Idempotency-Key is still being processed."),
      PayloadTooLarge: errorResponse("The request body is over 1 MiB."),
      UnsupportedMediaType: errorResponse("The request body is declared as something other than JSON."),
      IdempotencyKeyReused: errorResponse("The Idempotency-Key was used before with a different request."),
      ServerError: errorResponse("An unexpected failure; the text is opaque."),
      RateLimited: errorResponse(
        "Over a rate limit, nothing was done: the organization's (`Too many requests for this organization; retry in 2 s`), the key's own " +
          "(`Too many requests for this API key; …`), or this client address sent too many requests with a missing, malformed, unknown or " +
          "revoked key (`Too many failed authentications from this address; …`, before any key is looked up).",
        { ...RETRY_AFTER, ...RATE_LIMIT_HEADERS },
      ),
      Unavailable: errorResponse("The database is down, frozen or too slow right now; nothing was done.", RETRY_AFTER),
    },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", description: "An API key: `platter_ro_…` (read-only) or `platter_rw_…` (read/write)." },
    },
  },
});
