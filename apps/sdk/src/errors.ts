/**
 * Errors thrown by the SDK. Every failure of a request is a `PlatterError`; the subclass says
 * what happened, so callers can `catch (e) { if (e instanceof NotFoundError) … }`.
 */

/** What is known about a failed request. */
export interface PlatterErrorDetails {
  /** The HTTP status; `undefined` when no response arrived. */
  readonly status?: number | undefined;
  /** The `x-request-id` of the response: quote it when asking for support. */
  readonly requestId?: string | undefined;
  /** The response headers, when a response arrived. */
  readonly headers?: Headers | undefined;
  readonly cause?: unknown;
}

/** Base class of every error of a request to the API. */
export class PlatterError extends Error {
  override readonly name: string = "PlatterError";
  /** The HTTP status; `undefined` for a `ConnectionError`. */
  readonly status: number | undefined;
  /** The `x-request-id` response header; `undefined` when no response arrived. */
  readonly requestId: string | undefined;
  /** The response headers, when a response arrived. */
  readonly headers: Headers | undefined;
  /**
   * The Idempotency-Key a failed create was sent with. A create that failed after its retries may
   * still have been made: retry it with this key, never a new one, to avoid a duplicate.
   */
  idempotencyKey: string | undefined;

  constructor(message: string, details: PlatterErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.status = details.status;
    this.requestId = details.requestId;
    this.headers = details.headers;
  }
}

/** 400, 413, 415 or 422: the request cannot be accepted as sent; `message` says why (`name is required`). */
export class InvalidRequestError extends PlatterError {
  override readonly name: string = "InvalidRequestError";
}

/** 401: no API key, a malformed key or a revoked key. */
export class AuthenticationError extends PlatterError {
  override readonly name: string = "AuthenticationError";
}

/** 403: the key may not do this (a read-only key used for a create). */
export class PermissionError extends PlatterError {
  override readonly name: string = "PermissionError";
}

/** 404: no such record in the key's organization (or an unknown endpoint). */
export class NotFoundError extends PlatterError {
  override readonly name: string = "NotFoundError";
}

/** 409: a conflict, e.g. a create with the same Idempotency-Key is still being processed. */
export class ConflictError extends PlatterError {
  override readonly name: string = "ConflictError";
}

/** 429: too many requests. `retryAfterMs` is the server's `Retry-After`, when it sent one. */
export class RateLimitError extends PlatterError {
  override readonly name: string = "RateLimitError";
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: PlatterErrorDetails & { readonly retryAfterMs?: number | undefined } = {}) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx: the service failed; the request may be retried. */
export class ApiError extends PlatterError {
  override readonly name: string = "ApiError";
}

/** No response: the connection failed or the request timed out. `status` is `undefined`. */
export class ConnectionError extends PlatterError {
  override readonly name: string = "ConnectionError";
}

/**
 * `events.manifest(id)`: a dish's recipe answered 404, though the event lists the dish (the recipe
 * was removed in the application between the two reads). Not a `NotFoundError`, which from
 * `manifest` means the event itself; read the manifest again. `cause` is the recipe's `NotFoundError`.
 */
export class MissingRecipeError extends PlatterError {
  override readonly name: string = "MissingRecipeError";
  /** The event whose manifest was being read. */
  readonly eventId: number;
  /** The recipe that answered 404. */
  readonly recipeId: number;
  /** The event's dishes made from that recipe. */
  readonly dishIds: number[];

  constructor(eventId: number, recipeId: number, dishIds: number[], cause: NotFoundError) {
    super(
      `Event ${eventId}: recipe ${recipeId} of dish${dishIds.length === 1 ? "" : "es"} ${dishIds.join(", ")} was not found ` +
        "(removed since the event was read?); read the manifest again",
      { status: cause.status, requestId: cause.requestId, headers: cause.headers, cause },
    );
    this.eventId = eventId;
    this.recipeId = recipeId;
    this.dishIds = dishIds;
  }
}

/** The error class for a response status (400–599); other statuses are plain `PlatterError`s. */
export const errorClassFor = (status: number): typeof PlatterError => {
  switch (status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return InvalidRequestError;
    case 401:
      return AuthenticationError;
    case 403:
      return PermissionError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 429:
      return RateLimitError;
    default:
      return status >= 500 ? ApiError : PlatterError;
  }
};
