import type { DomainError } from "@platter/domain";
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

/** Every error the API answers on purpose. */
export type ApiError = DomainError | UnknownEndpoint | PayloadTooLarge | UnsupportedMediaType;

export interface HttpErrorResponse {
  readonly status: number;
  readonly error: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Status and text of every expected error; anything else is answered as an opaque 500. */
export const toHttpError = (error: ApiError): HttpErrorResponse => {
  switch (error._tag) {
    case "Unauthenticated":
      return { status: 401, error: "Missing, malformed or revoked API key", headers: { "www-authenticate": "Bearer" } };
    case "Forbidden":
      return { status: 403, error: "This API key is read-only" };
    case "NotFound":
      return { status: 404, error: "Not found" };
    case "UnknownEndpoint":
      return { status: 404, error: "Unknown endpoint" };
    case "InvalidInput":
      return { status: 400, error: error.message };
    case "InvalidCursor":
      return { status: 400, error: "Invalid cursor" };
    case "InvalidTransition":
      return { status: 409, error: error.message };
    case "PayloadTooLarge":
      return { status: 413, error: `Request body must be at most ${error.limitBytes} bytes` };
    case "UnsupportedMediaType":
      return { status: 415, error: "Content-Type must be application/json" };
    case "IdempotencyKeyReused":
      return { status: 422, error: "This Idempotency-Key was already used with a different request" };
    case "IdempotencyKeyInProgress":
      return { status: 409, error: "A request with this Idempotency-Key is still being processed; retry shortly" };
  }
};

const API_ERROR_TAGS: ReadonlySet<string> = new Set([
  "Unauthenticated", "Forbidden", "NotFound", "UnknownEndpoint", "InvalidInput", "InvalidCursor", "InvalidTransition",
  "PayloadTooLarge", "UnsupportedMediaType", "IdempotencyKeyReused", "IdempotencyKeyInProgress",
]);

/** Whether a thrown value is one of our expected errors (and not a defect). */
export const isApiError = (value: unknown): value is ApiError =>
  typeof value === "object" && value !== null && API_ERROR_TAGS.has((value as { _tag?: unknown })._tag as string);
