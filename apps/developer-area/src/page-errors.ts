import { Schema } from "effect";

/** The Developer area's own expected errors; `error-pages.ts` turns each (and the domain's) into a status and a page. */

/** No live session: never signed in, signed out, or the working day is over. */
export class SignInRequired extends Schema.TaggedError<SignInRequired>()("SignInRequired", {}) {}

/** A form without this session's token, or sent from another origin (cross-site request forgery). */
export class FormRefused extends Schema.TaggedError<FormRefused>()("FormRefused", {}) {}

/** A form body that could not be read (too large, not a form). */
export class UnreadableForm extends Schema.TaggedError<UnreadableForm>()("UnreadableForm", {}) {}

/** A path or method the area does not serve. */
export class UnknownPage extends Schema.TaggedError<UnknownPage>()("UnknownPage", {}) {}

/** The database is down or too slow right now: nothing was done, and a retry may work. */
export class AreaUnavailable extends Schema.TaggedError<AreaUnavailable>()("AreaUnavailable", {
  /** The driver's error, for the log. */
  reason: Schema.Unknown,
}) {}

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
