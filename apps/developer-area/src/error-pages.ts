import type { NotFound, SecretKeyUnavailable, SignInRefused } from "@platter/domain";
import { DatabaseUnavailable, type HttpErrorResponse, isApiError, toHttpError, UnknownEndpoint } from "@platter/ops";
import type { Middleware } from "koa";
import type { Logger } from "pino";
import type {
  AreaUnavailable, FormRefused, SignInRequired, TooManyActions, TooManyFailedSignIns, TooManyPageLoads, UnknownPage, UnreadableForm,
} from "./page-errors.ts";
import { loggedError, loggedPath } from "./log-redaction.ts";
import { howToGetALink, messagePage } from "./pages.ts";

/** Error pages: the one place where an error becomes a status and a page (or, for the CLI's routes, JSON). Anything unexpected is logged and a plain 500 page. */

type PageError =
  | SignInRequired | FormRefused | UnreadableForm | UnknownPage | AreaUnavailable | NotFound | SignInRefused | TooManyActions
  | TooManyFailedSignIns | TooManyPageLoads | SecretKeyUnavailable;

/** `90` → `2 minutes`, `30` → `30 seconds`: when to try again, in words. */
const inWords = (seconds: number) =>
  seconds < 60 ? `${seconds} ${seconds === 1 ? "second" : "seconds"}` : `${Math.ceil(seconds / 60)} ${Math.ceil(seconds / 60) === 1 ? "minute" : "minutes"}`;

interface ErrorPage {
  readonly status: number;
  readonly page: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const notFoundPage = (): ErrorPage => ({
  status: 404,
  page: messagePage("Page not found", ["There is nothing at this address. It may have been mistyped, or the record is not yours to see."], {
    href: "/api-keys", label: "Go to API keys",
  }),
});

const REFUSED_LINK: Record<SignInRefused["reason"], { status: number; title: string; why: string }> = {
  used: { status: 410, title: "This sign-in link was already used", why: "A sign-in link works once, so that a copied or forwarded link lets nobody else in." },
  expired: { status: 410, title: "This sign-in link has expired", why: "A sign-in link works for 15 minutes after it was made." },
  unknown: { status: 404, title: "This sign-in link is not valid", why: "Check that the whole link was copied; links are long." },
};

type PageOf = { readonly [Tag in PageError["_tag"]]: (error: Extract<PageError, { _tag: Tag }>) => ErrorPage };

const PAGES: PageOf = {
  SignInRequired: () => ({
    status: 401,
    page: messagePage("Sign in to the Developer area", ["You are not signed in, or your session has ended (sessions last a working day).", howToGetALink]),
  }),
  SignInRefused: (error) => {
    const refused = REFUSED_LINK[error.reason];
    return { status: refused.status, page: messagePage(refused.title, [refused.why, howToGetALink]) };
  },
  FormRefused: () => ({
    status: 403,
    page: messagePage("This form could not be accepted", [
      "It did not come from a page of this Developer area session: it may have been sent by another site, or from a page opened before you signed in again. Nothing was changed.",
    ], { href: "/api-keys", label: "Back to API keys" }),
  }),
  UnreadableForm: () => ({
    status: 400,
    page: messagePage("This form could not be read", ["It was not sent as a web form, or it was too large. Nothing was changed."], {
      href: "/api-keys", label: "Back to API keys",
    }),
  }),
  UnknownPage: notFoundPage,
  NotFound: notFoundPage,
  TooManyActions: (error) => ({
    status: 429,
    page: messagePage(`Too many ${error.what} for now`, [
      `Your organization may make ${error.allowed} ${error.what} every ${inWords(Math.round(error.windowMs / 1000))}, and has. Nothing was done. Try again in ${inWords(error.retryAfterSeconds)}.`,
    ], { href: error.back, label: "Go back" }),
    headers: { "retry-after": String(error.retryAfterSeconds) },
  }),
  TooManyFailedSignIns: (error) => ({
    status: 429,
    page: messagePage("Too many failed sign-ins from your network", [
      `Sign-in links or sessions that were not valid were used from your network too often. Try again in ${inWords(error.retryAfterSeconds)}.`,
      howToGetALink,
    ]),
    headers: { "retry-after": String(error.retryAfterSeconds) },
  }),
  TooManyPageLoads: (error) => ({
    status: 429,
    page: messagePage("Too many pages loading at once", [
      `Your organization may load ${error.allowed} pages of the Developer area at a time, and is. Nothing was done. Please try again in a moment.`,
    ], { href: "/api-keys", label: "Back to API keys" }),
    headers: { "retry-after": "1" },
  }),
  // The server lacks the key the endpoint's secret was sealed with: nothing the developer can change; the operator must add it.
  SecretKeyUnavailable: (error) => ({
    status: 503,
    page: messagePage("This signing secret cannot be used on this server", [error.message, "Ask your Platter contact to configure that key; then try again."], {
      href: "/webhooks", label: "Back to webhooks",
    }),
  }),
  AreaUnavailable: () => ({
    status: 503,
    page: messagePage("The Developer area is briefly unavailable", ["Nothing was changed. Please try again in a moment."]),
    headers: { "retry-after": "1" },
  }),
};

const isPageError = (value: unknown): value is PageError =>
  typeof value === "object" && value !== null && Object.hasOwn(PAGES, (value as { _tag?: unknown })._tag as string);

/**
 * The CLI's routes (`/cli/…`, listen-routes.ts) answer JSON as the API does: its errors with the
 * API's own status and text (`toHttpError`), an organization limit as 429, an unknown path as 404;
 * undefined for a defect.
 */
const cliAnswer = (thrown: unknown): HttpErrorResponse | undefined => {
  if (isApiError(thrown)) return toHttpError(thrown);
  if (!isPageError(thrown)) return undefined;
  switch (thrown._tag) {
    case "TooManyActions":
      return {
        status: 429,
        error: `Your organization may make ${thrown.allowed} ${thrown.what} every ${inWords(Math.round(thrown.windowMs / 1000))}; retry in ${inWords(thrown.retryAfterSeconds)}`,
        headers: { "retry-after": String(thrown.retryAfterSeconds) },
      };
    case "UnknownPage":
    case "NotFound":
      return toHttpError(new UnknownEndpoint());
    case "AreaUnavailable":
      return toHttpError(new DatabaseUnavailable({ reason: thrown.reason }));
    default:
      return undefined;
  }
};

/** Renders anything thrown below as its page; defects are logged (tokens redacted) and answered with an opaque 500 page. */
export const errorPages =
  (logger: Logger): Middleware =>
  async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      // The operator's to mend: said in the log too, with the key this process lacks.
      if ((thrown as { _tag?: unknown } | undefined)?._tag === "SecretKeyUnavailable") {
        logger.warn({ keyId: (thrown as SecretKeyUnavailable).keyId, path: loggedPath(ctx) }, "a stored secret is sealed with a key SECRET_ENCRYPTION_KEYS does not hold");
      }
      if (ctx.path.startsWith("/cli/")) {
        const known = cliAnswer(thrown);
        if (known === undefined) logger.error({ err: loggedError(thrown, ctx), method: ctx.method, path: loggedPath(ctx) }, "unhandled error");
        if (thrown instanceof DatabaseUnavailable) logger.error({ err: loggedError(thrown.reason, ctx), path: loggedPath(ctx) }, "database unavailable");
        const answer = known ?? { status: 500, error: "Internal error; it has been logged" };
        ctx.status = answer.status;
        if (answer.headers) ctx.set(answer.headers);
        ctx.body = { error: answer.error };
        return;
      }
      let answer: ErrorPage;
      if (isPageError(thrown)) {
        if (thrown._tag === "AreaUnavailable") logger.error({ err: loggedError(thrown.reason, ctx), path: loggedPath(ctx) }, "database unavailable");
        answer = (PAGES[thrown._tag] as (error: PageError) => ErrorPage)(thrown);
      } else {
        // A sign-in path carries a live link's token: never logged as it is.
        logger.error({ err: loggedError(thrown, ctx), method: ctx.method, path: loggedPath(ctx) }, "unhandled error");
        answer = { status: 500, page: messagePage("Something went wrong", ["This is our fault and has been logged. Nothing was changed; please try again."]) };
      }
      ctx.status = answer.status;
      if (answer.headers) ctx.set(answer.headers);
      ctx.type = "text/html; charset=utf-8";
      ctx.body = answer.page;
    }
  };
