import { ApiError, ConflictError, ConnectionError, type PlatterError, RateLimitError } from "./errors.ts";

/**
 * When and how long to wait before retrying: exponential backoff with full jitter, or the
 * server's `Retry-After` when it sent one.
 */

/** First backoff ceiling; it doubles each attempt. */
const BASE_DELAY_MS = 500;
/** Largest backoff ceiling. */
const MAX_DELAY_MS = 8_000;
/** A `Retry-After` longer than this is not waited for: the error is thrown instead. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Whether a failed request may be sent again. Only safe requests are: GETs, and creates that
 * carry an Idempotency-Key (the server answers a repeat once). Retried: no response
 * (`ConnectionError`), 429, 5xx, and 409 for idempotent creates (the first one is still running).
 */
export const isRetryable = (
  error: PlatterError,
  request: { readonly method: string; readonly idempotencyKey?: string | undefined },
): boolean => {
  const safe = request.method === "GET" || request.idempotencyKey !== undefined;
  if (!safe) return false;
  const retryAfter = retryAfterOf(error.headers);
  if (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS) return false;
  if (error instanceof ConflictError) return request.idempotencyKey !== undefined;
  return error instanceof ConnectionError || error instanceof RateLimitError || error instanceof ApiError;
};

/**
 * A 409 means the first request with this key is still running on the server (often one that
 * outlived our timeout): wait at least this long, growing, so the retry finds it finished.
 */
const CONFLICT_MIN_DELAY_MS = 1_000;

/** Milliseconds to wait before retry number `retry` (0 for the first retry): `Retry-After` if sent, else full jitter. */
export const retryDelayMs = (retry: number, error: PlatterError, random: () => number = Math.random): number => {
  const jitter = Math.floor(random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** retry));
  const floor = error instanceof ConflictError ? CONFLICT_MIN_DELAY_MS * 2 ** retry : 0;
  return retryAfterOf(error.headers) ?? floor + jitter;
};

/** A `Retry-After` header in milliseconds: delay-seconds or an HTTP date; `undefined` when absent or unreadable. */
export const retryAfterOf = (headers: Headers | undefined, now: number = Date.now()): number | undefined => {
  const value = headers?.get("retry-after")?.trim();
  if (value === undefined || value === "") return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date always names its day and month ("Fri, 01 Jan 2027 00:00:30 GMT"); Date.parse alone would take "-5" as a year.
  const date = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
};
