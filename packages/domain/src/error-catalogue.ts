import type { PlatterError } from "./errors.ts";
import { ERROR_TEXT_MAX_CHARACTERS, storableText } from "./storable-text.ts";

/**
 * The error catalogue: the one place where an expected failure gets its status, its text, its
 * headers and its kind. Each edge renders an answer from it once: the API and the Developer area's
 * `/cli/` routes as JSON (`jsonAnswer`), the Developer area as a page (error-pages.ts), the CLI as a
 * line and an exit code (failures.ts). Anything not in it is a defect: logged, an opaque 500.
 */

/**
 * What kind of failure an error is, which decides the CLI's exit code and whether a route's count
 * is given back: `input` the request itself is wrong (exit 2, with the help hint), `limit` a
 * well-formed request over a limit (exit 2), `refusal` a request the records or the caller's rights
 * refuse (exit 1), `outage` the service cannot answer right now (exit 1; not a refusal: work may
 * have been done, so a count is kept).
 */
export type ErrorKind = "input" | "limit" | "refusal" | "outage";

/** How every surface answers one error. */
export interface ErrorAnswer {
  /** The HTTP status every HTTP surface answers. */
  readonly status: number;
  /** The sentence the JSON answers and the CLI print (the Developer area's page shows it unless it has its own words). */
  readonly text: string;
  /** Headers beside the status (`Retry-After`, `WWW-Authenticate`, `Connection`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** What kind of failure it is (see `ErrorKind`). */
  readonly kind: ErrorKind;
}

/** `90` → `2 minutes`, `30` → `30 seconds`: when to try again, in words. */
export const inWords = (seconds: number): string =>
  seconds < 60 ? `${seconds} ${seconds === 1 ? "second" : "seconds"}` : `${Math.ceil(seconds / 60)} ${Math.ceil(seconds / 60) === 1 ? "minute" : "minutes"}`;

/** What each rate limit's 429 says was exceeded. */
const RATE_LIMITED_BY = {
  key: "Too many requests for this API key",
  organization: "Too many requests for this organization",
  address: "Too many failed authentications from this address",
} as const;

/** What a refused sign-in link answers, by why it was refused. */
export const REFUSED_SIGN_IN_LINK = {
  used: { status: 410, text: "This sign-in link was already used" },
  expired: { status: 410, text: "This sign-in link has expired" },
  unknown: { status: 404, text: "This sign-in link is not valid" },
} as const;

/** The catalogue's shape: one entry per tag of `PlatterError`, so a new tagged error without one does not compile. */
export type ErrorCatalogue = { readonly [Tag in PlatterError["_tag"]]: (error: Extract<PlatterError, { _tag: Tag }>) => ErrorAnswer };

/** A text made from input is answered storable and at most `ERROR_TEXT_MAX_CHARACTERS`, whoever made it: the answer is what the request log keeps. */
const echoed = (text: string) => storableText(text, ERROR_TEXT_MAX_CHARACTERS);

/** Status, text, headers and kind of every expected error, one entry per tag. */
export const ERROR_CATALOGUE: ErrorCatalogue = {
  Unauthenticated: () => ({ status: 401, text: "Missing, malformed or revoked API key", headers: { "www-authenticate": "Bearer" }, kind: "refusal" }),
  Forbidden: () => ({ status: 403, text: "This API key is read-only", kind: "refusal" }),
  NotFound: () => ({ status: 404, text: "Not found", kind: "refusal" }),
  UnknownEndpoint: () => ({ status: 404, text: "Unknown endpoint", kind: "input" }),
  UnknownPage: () => ({ status: 404, text: "Unknown endpoint", kind: "input" }),
  InvalidInput: (error) => ({ status: 400, text: echoed(error.message), kind: "input" }),
  InvalidCursor: () => ({ status: 400, text: "Invalid cursor", kind: "input" }),
  InvalidTransition: (error) => ({ status: 409, text: echoed(error.message), kind: "refusal" }),
  // The unread rest of the body makes the connection unusable: it closes after this answer.
  PayloadTooLarge: (error) => ({
    status: 413, text: `Request body must be at most ${error.limitBytes} bytes`, headers: { connection: "close" }, kind: "input",
  }),
  UnsupportedMediaType: () => ({ status: 415, text: "Content-Type must be application/json", kind: "input" }),
  IdempotencyKeyReused: () => ({ status: 422, text: "This Idempotency-Key was already used with a different request", kind: "input" }),
  IdempotencyKeyInProgress: () => ({
    status: 409, text: "A request with this Idempotency-Key is still being processed; retry shortly", kind: "refusal",
  }),
  RateLimited: (error) => ({
    status: 429,
    text: `${RATE_LIMITED_BY[error.limitedBy]}; retry in ${error.retryAfterSeconds} s`,
    headers: { "retry-after": String(error.retryAfterSeconds) },
    kind: "limit",
  }),
  DatabaseUnavailable: () => ({
    status: 503, text: "The service is temporarily unavailable; retry shortly", headers: { "retry-after": "1" }, kind: "outage",
  }),
  // An interruption is answered as one: the process is stopping, another instance serves the retry.
  ShuttingDown: () => ({
    status: 503, text: "This server is shutting down; retry shortly", headers: { "retry-after": "1", connection: "close" }, kind: "outage",
  }),
  // The server lacks a key a stored secret was sealed with: nothing the caller can change, the operator must configure it.
  SecretKeyUnavailable: (error) => ({ status: 503, text: error.message, kind: "refusal" }),
  // A capability the operator left off (no SMTP_URL): as a missing key, nothing the caller can change, and no Retry-After (waiting changes nothing).
  MailNotConfigured: () => ({ status: 503, text: "This Platter sends no e-mail: ask your Platter contact to set SMTP_URL.", kind: "refusal" }),
  SignInRefused: (error) => ({ ...REFUSED_SIGN_IN_LINK[error.reason], kind: "refusal" }),
  EndpointLimitReached: (error) => ({ status: 409, text: error.message, kind: "limit" }),
  ApiKeyLimitReached: (error) => ({ status: 409, text: error.message, kind: "limit" }),
  AlertRecipientLimitReached: (error) => ({ status: 409, text: error.message, kind: "limit" }),
  EndpointUrlRefused: (error) => ({ status: 400, text: echoed(error.message), kind: "input" }),
  EndpointUrlTaken: (error) => ({ status: 409, text: error.message, kind: "input" }),
  SignInRequired: () => ({ status: 401, text: "Sign in to the Developer area", kind: "refusal" }),
  FormRefused: () => ({ status: 403, text: "This form could not be accepted", kind: "refusal" }),
  UnreadableForm: () => ({ status: 400, text: "This form could not be read", kind: "input" }),
  TooManyActions: (error) => ({
    status: 429,
    text: `Your organization may make ${error.allowed} ${error.what} every ${inWords(Math.round(error.windowMs / 1000))}; retry in ${inWords(error.retryAfterSeconds)}`,
    headers: { "retry-after": String(error.retryAfterSeconds) },
    kind: "limit",
  }),
  TooManyFailedSignIns: (error) => ({
    status: 429,
    text: `Too many failed sign-ins from your network; retry in ${inWords(error.retryAfterSeconds)}`,
    headers: { "retry-after": String(error.retryAfterSeconds) },
    kind: "limit",
  }),
  TooManyPageLoads: (error) => ({
    status: 429,
    text: `Your organization may load ${error.allowed} pages at a time, and is; retry in a moment`,
    headers: { "retry-after": "1" },
    kind: "limit",
  }),
};

/** Whether a thrown value is one of the catalogue's expected errors (and not a defect). */
export const isPlatterError = (value: unknown): value is PlatterError =>
  typeof value === "object" && value !== null && Object.hasOwn(ERROR_CATALOGUE, (value as { _tag?: unknown })._tag as string);

/** The catalogue's answer to `error`. */
export const errorAnswer = (error: PlatterError): ErrorAnswer =>
  (ERROR_CATALOGUE[error._tag] as (error: PlatterError) => ErrorAnswer)(error);

/** A JSON answer: its status, its headers and its `{"error": …}` body. */
export interface JsonAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly error: string };
}

/** What a defect is answered as JSON: opaque, the details only in the log. */
export const DEFECT_TEXT = "Internal server error";

/**
 * The JSON answer to anything thrown (the API's and the Developer area's `/cli/` routes): an
 * expected error's status, headers and text from the catalogue; anything else an opaque 500.
 */
export const jsonAnswer = (thrown: unknown): JsonAnswer => {
  if (!isPlatterError(thrown)) return { status: 500, headers: {}, body: { error: DEFECT_TEXT } };
  const { status, text, headers } = errorAnswer(thrown);
  return { status, headers: headers ?? {}, body: { error: text } };
};
