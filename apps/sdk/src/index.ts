/** @platter/sdk: the TypeScript client of the Platter API. */
export { Platter, type PlatterOptions } from "./platter.ts";
export { PageList } from "./pagination.ts";
export {
  ApiError, AuthenticationError, ConflictError, ConnectionError, InvalidRequestError, NotFoundError, PermissionError,
  MissingRecipeError, PlatterError, RateLimitError, type PlatterErrorDetails,
} from "./errors.ts";
export type { Allergen, DietFlags, EventManifest, ManifestDish, ManifestOptions } from "./manifest.ts";
export {
  DEFAULT_WEBHOOK_TOLERANCE_SECONDS, verifyWebhook, type VerifyWebhookOptions, WEBHOOK_SIGNATURE_HEADER, type WebhookHeaders,
  WebhookSignatureError,
} from "./webhooks.ts";
export type {
  Client, ClientCreate, Created, CreateOptions, Dish, Event, EventCreate, EventDetail, Ingredient, Invoice, InvoiceDetail,
  FeedMessage, LineItem, ListPage, ListParams, MessageFeedParams, Organization, Recipe, RecipeDetail, WebhookEvent, WebhookEventType,
} from "./types.ts";
export type { EventsResource } from "./resources/events.ts";
export type { RecipesResource } from "./resources/recipes.ts";
export type { ClientsResource } from "./resources/clients.ts";
export type { InvoicesResource } from "./resources/invoices.ts";
export type { MeResource } from "./resources/me.ts";
export type { MessagesResource } from "./resources/messages.ts";
/** The raw generated OpenAPI types, for advanced use. */
export type { components, operations, paths, webhooks } from "./generated/api-types.ts";
