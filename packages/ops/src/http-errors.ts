import { type DomainError, ERROR_TEXT_MAX_CHARACTERS, storableText } from "@platter/domain";
import { Schema } from "effect";

/** HTTP errors: the one place where an error becomes a status and an `{"error": …}` text. */

/** A path or method the API does not serve. */
export class UnknownEndpoint extends Schema.TaggedError<UnknownEndpoint>()("UnknownEndpoint", {}) {}

/** A request body over the size limit. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  limitBytes: Schema.Int,
}) {}

/** A request body that is declared as something other than JSON. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {}) {}

/** The database is down, frozen or too slow right now: the request did nothing and may be retried. */
export class DatabaseUnavailable extends Schema.TaggedError<DatabaseUnavailable>()("DatabaseUnavailable", {
  /** The driver's error, for the outage log line. */
  reason: Schema.Unknown,
}) {}

/**
 * A request over a rate limit: the key's own, its organization's, or the failed authentications
 * of its client address; `Retry-After` says when to try again.
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  limitedBy: Schema.Literals(["key", "organization", "address"]),
  retryAfterSeconds: Schema.Int,
}) {}

/** What each rate limit's 429 says was exceeded. */
const RATE_LIMITED_BY: Readonly<Record<RateLimited["limitedBy"], string>> = {
  key: "Too many requests for this API key",
  organization: "Too many requests for this organization",
  address: "Too many failed authentications from this address",
};

/** Every error the API answers on purpose. */
export type ApiError = DomainError | UnknownEndpoint | PayloadTooLarge | UnsupportedMediaType | DatabaseUnavailable | RateLimited;

export interface HttpErrorResponse {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

type ResponseOf = { readonly [Tag in ApiError["_tag"]]: (error: Extract<ApiError, { _tag: Tag }>) => HttpErrorResponse };

/**
 * Status and text of every expected error, one entry per tag; anything else is an opaque 500. A
 * text made from input (an `InvalidInput`'s or `InvalidTransition`'s message) is answered storable
 * and at most `ERROR_TEXT_MAX_CHARACTERS`, whoever made it: the answer is what the request log keeps.
 */
const RESPONSES: ResponseOf = {
  Unauthenticated: () => ({ status: 401, error: "Missing, malformed or revoked API key", headers: { "www-authenticate": "Bearer" } }),
  Forbidden: () => ({ status: 403, error: "This API key is read-only" }),
  NotFound: () => ({ status: 404, error: "Not found" }),
  UnknownEndpoint: () => ({ status: 404, error: "Unknown endpoint" }),
  InvalidInput: (error) => ({ status: 400, error: storableText(error.message, ERROR_TEXT_MAX_CHARACTERS) }),
  InvalidCursor: () => ({ status: 400, error: "Invalid cursor" }),
  InvalidTransition: (error) => ({ status: 409, error: storableText(error.message, ERROR_TEXT_MAX_CHARACTERS) }),
  // The unread rest of the body makes the connection unusable: it closes after this answer.
  PayloadTooLarge: (error) => ({
    status: 413, error: `Request body must be at most ${error.limitBytes} bytes`, headers: { connection: "close" },
  }),
  UnsupportedMediaType: () => ({ status: 415, error: "Content-Type must be application/json" }),
  IdempotencyKeyReused: () => ({ status: 422, error: "This Idempotency-Key was already used with a different request" }),
  RateLimited: (error) => ({
    status: 429,
    error: `${RATE_LIMITED_BY[error.limitedBy]}; retry in ${error.retryAfterSeconds} s`,
    headers: { "retry-after": String(error.retryAfterSeconds) },
  }),
  DatabaseUnavailable: () => ({
    status: 503, error: "The service is temporarily unavailable; retry shortly", headers: { "retry-after": "1" },
  }),
  // The server lacks a key a stored secret was sealed with: nothing the caller can change, the operator must configure it.
  SecretKeyUnavailable: (error) => ({ status: 503, error: error.message }),
  IdempotencyKeyInProgress: () => ({
    status: 409,
    error: "A request with this Idempotency-Key is still being processed; retry shortly",
  }),
};

export const toHttpError = (error: ApiError): HttpErrorResponse =>
  (RESPONSES[error._tag] as (error: ApiError) => HttpErrorResponse)(error);

/** Whether a thrown value is one of our expected errors (and not a defect). */
export const isApiError = (value: unknown): value is ApiError =>
  typeof value === "object" && value !== null && Object.hasOwn(RESPONSES, (value as { _tag?: unknown })._tag as string);
