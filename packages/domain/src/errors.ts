import { Effect, Schema } from "effect";

/**
 * Errors: every expected failure of Platter, as tagged values: the domain's, and those the edges
 * raise themselves (an unknown path, a body too large, a rate limit, a database outage, a form from
 * another site). `error-catalogue.ts` gives each tag its status and text once; each edge renders it.
 */

/** No key, a malformed key, an unknown key or a revoked key. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {}) {}

/** A read-only key used for a write. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {}) {}

/** The record does not exist or belongs to another organization: the two are indistinguishable. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {}) {}

/** Input that cannot be accepted; `message` is safe to show to the caller. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String,
}) {}

/** A cursor that is corrupted, altered or issued by another endpoint. */
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", {}) {}

/** A state change the record's current state does not allow (paying a void invoice). */
export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  message: Schema.String,
}) {}


/** An Idempotency-Key reused with a different request. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()("IdempotencyKeyReused", {}) {}

/** An Idempotency-Key whose first request is still being processed. */
export class IdempotencyKeyInProgress extends Schema.TaggedError<IdempotencyKeyInProgress>()("IdempotencyKeyInProgress", {}) {}

/** A sign-in link that opens no session: already used, expired, or never issued. */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  reason: Schema.Literals(["used", "expired", "unknown"]),
}) {}

/**
 * An organization already has as many webhook endpoints as it may (`limit`, disabled ones
 * included), so registering another is refused and writes nothing. `message` is safe to show.
 */
export class EndpointLimitReached extends Schema.TaggedError<EndpointLimitReached>()("EndpointLimitReached", {
  limit: Schema.Finite,
  message: Schema.String,
}) {}

/**
 * A webhook URL the SSRF guard refuses: it names or resolves to a loopback, private or otherwise
 * internal address, or to none. `message` is safe to show: it names the host given, never what it
 * resolves to (that would map internal networks for whoever asks).
 */
export class EndpointUrlRefused extends Schema.TaggedError<EndpointUrlRefused>()("EndpointUrlRefused", {
  message: Schema.String,
}) {}

/** `WEBHOOK_ENDPOINTS_PER_ORGANIZATION` when unset: three times Stripe's 16, far above what an integration uses. */
export const DEFAULT_ENDPOINTS_PER_ORGANIZATION = 50;

/** The refusal of one more endpoint beyond `limit`, with the sentence the CLI and the Developer area show. */
export const endpointLimitReached = (limit: number): EndpointLimitReached =>
  new EndpointLimitReached({
    limit,
    message: `This organization already has ${limit} webhook ${limit === 1 ? "endpoint" : "endpoints"}, the most it may have ` +
      "(disabled ones count). Reuse one of them, or ask your Platter contact to raise the limit.",
  });

/**
 * An organization already has as many working API keys as it may (`limit`: keys not revoked, not
 * expired and not replaced by a roll), so creating another is refused and writes nothing.
 * `message` is safe to show.
 */
export class ApiKeyLimitReached extends Schema.TaggedError<ApiKeyLimitReached>()("ApiKeyLimitReached", {
  limit: Schema.Finite,
  message: Schema.String,
}) {}

/** `API_KEYS_PER_ORGANIZATION` when unset: far above the few keys an integration uses (one per system and environment). */
export const DEFAULT_API_KEYS_PER_ORGANIZATION = 100;

/** The refusal of one more API key beyond `limit`, with the sentence the CLI and the Developer area show. */
export const apiKeyLimitReached = (limit: number): ApiKeyLimitReached =>
  new ApiKeyLimitReached({
    limit,
    message: `This organization already has ${limit} working API ${limit === 1 ? "key" : "keys"}, the most it may have ` +
      "(revoked, expired and rolled ones do not count). Revoke one it no longer uses, or ask your Platter contact to raise the limit.",
  });

/**
 * An organization already alerts as many e-mail addresses as it may (`limit`, those waiting for
 * confirmation included), so adding another is refused, writes nothing and mails nothing.
 * `message` is safe to show.
 */
export class AlertRecipientLimitReached extends Schema.TaggedError<AlertRecipientLimitReached>()("AlertRecipientLimitReached", {
  limit: Schema.Finite,
  message: Schema.String,
}) {}

/**
 * This Platter sends no e-mail (its operator set no `SMTP_URL`), so nothing that must mail (adding
 * an alert address, whose confirmation link is mailed) can be done: nothing was written. The
 * caller cannot change it; the operator can.
 */
export class MailNotConfigured extends Schema.TaggedError<MailNotConfigured>()("MailNotConfigured", {}) {}

/** `ALERT_RECIPIENTS_PER_ORGANIZATION` when unset: a team's few developers and a shared inbox. */
export const DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION = 10;

/** The refusal of one more alert address beyond `limit`, with the sentence the Developer area shows. */
export const alertRecipientLimitReached = (limit: number): AlertRecipientLimitReached =>
  new AlertRecipientLimitReached({
    limit,
    message: `This organization already alerts ${limit} e-mail ${limit === 1 ? "address" : "addresses"}, the most it may ` +
      "(those waiting for confirmation count). Remove one first.",
  });

/**
 * The organization already has an endpoint for this URL (compared as `normalizedEndpointUrl`
 * writes it), so registering it again is refused and writes nothing: one message would reach the
 * same receiver twice. `message` names the endpoint and is safe to show.
 */
export class EndpointUrlTaken extends Schema.TaggedError<EndpointUrlTaken>()("EndpointUrlTaken", {
  endpointId: Schema.Finite,
  message: Schema.String,
}) {}

/** The refusal of `url`, which the organization's endpoint `endpointId` already has. */
export const endpointUrlTaken = (url: string, endpointId: number): EndpointUrlTaken =>
  new EndpointUrlTaken({ endpointId, message: `${url} is already endpoint ${endpointId}: one endpoint per URL (compared ignoring case and a trailing slash); use that one.` });

/**
 * A stored signing secret is sealed with a key this server does not hold (or holds a different key
 * under its id), so it cannot be revealed, rotated or signed with here: nothing was done, and the
 * operator must give this server that key (`SECRET_ENCRYPTION_KEYS`). `message` is safe to show.
 */
export class SecretKeyUnavailable extends Schema.TaggedError<SecretKeyUnavailable>()("SecretKeyUnavailable", {
  /** The id of the key the secret was sealed with (as its stored value says). */
  keyId: Schema.String,
  message: Schema.String,
}) {}

/** The refusal of a secret sealed with key `keyId`, which this server cannot open, with the sentence every surface shows. */
export const secretKeyUnavailable = (keyId: string): SecretKeyUnavailable =>
  new SecretKeyUnavailable({
    keyId,
    message: `This signing secret was sealed with key "${keyId}", which this server does not hold, so it cannot be used here. ` +
      "Nothing was changed. The operator must add that key to SECRET_ENCRYPTION_KEYS on every Platter process.",
  });

/** Every expected failure of the domain the API answers. */
export type DomainError =
  | Unauthenticated | Forbidden | NotFound | InvalidInput | InvalidCursor | InvalidTransition
  | IdempotencyKeyReused | IdempotencyKeyInProgress | SecretKeyUnavailable;

/** A path or method the API (or the Developer area's `/cli/` routes) does not serve. */
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

/** The request's work was interrupted because this process is shutting down: nothing more was done, and another instance may serve a retry. */
export class ShuttingDown extends Schema.TaggedError<ShuttingDown>()("ShuttingDown", {}) {}

/**
 * A request over a rate limit: the key's own, its organization's, or the failed authentications
 * of its client address; `Retry-After` says when to try again.
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  limitedBy: Schema.Literals(["key", "organization", "address"]),
  retryAfterSeconds: Schema.Int,
}) {}

/** No live Developer-area session: never signed in, signed out, or the working day is over. */
export class SignInRequired extends Schema.TaggedError<SignInRequired>()("SignInRequired", {}) {}

/** A form without this session's token, or sent from another origin (cross-site request forgery). */
export class FormRefused extends Schema.TaggedError<FormRefused>()("FormRefused", {}) {}

/** A form body that could not be read (too large, not a form). */
export class UnreadableForm extends Schema.TaggedError<UnreadableForm>()("UnreadableForm", {}) {}

/** A path or method the Developer area does not serve. */
export class UnknownPage extends Schema.TaggedError<UnknownPage>()("UnknownPage", {}) {}

/** An action the organization has taken as often as its Developer-area limit allows in the current window: nothing was done. */
export class TooManyActions extends Schema.TaggedError<TooManyActions>()("TooManyActions", {
  /** What was refused, as a plural noun phrase: `test events`, `new endpoints`, `replays`. */
  what: Schema.String,
  /** How many the organization may take per window. */
  allowed: Schema.Finite,
  /** The window, in milliseconds. */
  windowMs: Schema.Finite,
  /** Seconds until the window resets and it may try again. */
  retryAfterSeconds: Schema.Finite,
  /** Where the page's button leads back to. */
  back: Schema.String,
}) {}

/** The client's address has presented too many unknown session cookies or sign-in links lately: refused before any lookup. */
export class TooManyFailedSignIns extends Schema.TaggedError<TooManyFailedSignIns>()("TooManyFailedSignIns", {
  /** Seconds until the address's window ends. */
  retryAfterSeconds: Schema.Finite,
}) {}

/** The organization has as many pages loading at once as `DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION` allows: this one was not started. */
export class TooManyPageLoads extends Schema.TaggedError<TooManyPageLoads>()("TooManyPageLoads", {
  /** How many may load at once. */
  allowed: Schema.Finite,
}) {}

/** Every expected failure of Platter: each has its entry in the error catalogue (`ERROR_CATALOGUE`). */
export type PlatterError =
  | DomainError | SignInRefused | EndpointLimitReached | EndpointUrlRefused | ApiKeyLimitReached | EndpointUrlTaken | AlertRecipientLimitReached | MailNotConfigured
  | UnknownEndpoint | PayloadTooLarge | UnsupportedMediaType | DatabaseUnavailable | ShuttingDown | RateLimited
  | SignInRequired | FormRefused | UnreadableForm | UnknownPage | TooManyActions | TooManyFailedSignIns | TooManyPageLoads;

/**
 * `effect` with every failure a defect except an outage, which stays typed: for a read whose row
 * must exist (its absence is a bug), where `Effect.orDie` would also make the database's absence one.
 */
export const orDieButOutage = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Extract<E, DatabaseUnavailable>, R> =>
  Effect.catchIf(
    effect,
    (error): error is Exclude<E, DatabaseUnavailable> => !(error instanceof DatabaseUnavailable),
    (error) => Effect.die(error),
  ) as Effect.Effect<A, Extract<E, DatabaseUnavailable>, R>;
