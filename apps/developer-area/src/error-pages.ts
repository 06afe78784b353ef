import { type ErrorAnswer, errorAnswer, inWords, isPlatterError, jsonAnswer, type PlatterError, REFUSED_SIGN_IN_LINK } from "@platter/domain";
import { Effect } from "effect";
import type { Context, Middleware } from "koa";
import type { Logger } from "pino";
import { loggedError, loggedPath } from "./log-redaction.ts";
import type { HtmlValue } from "./html.ts";
import { howToGetALink, messagePage } from "./pages.ts";

/**
 * Error pages: the Developer area's edge of the error catalogue. Every expected error is answered
 * with the catalogue's status and headers, as a page (or, for the CLI's `/cli/` routes, the
 * catalogue's JSON, as the API answers it). Anything unexpected is logged and a plain 500.
 */

/** A page's own words for an error: its title, paragraphs and button; the catalogue's text is the title of any error without them. */
interface PageWords {
  readonly title: string;
  readonly paragraphs: ReadonlyArray<HtmlValue>;
  readonly back?: { readonly href: string; readonly label: string };
}

const BACK_TO_KEYS = { href: "/api-keys", label: "Back to API keys" } as const;

const notFoundWords = (): PageWords => ({
  title: "Page not found",
  paragraphs: ["There is nothing at this address. It may have been mistyped, or the record is not yours to see."],
  back: { href: "/api-keys", label: "Go to API keys" },
});

/** Why each refused sign-in link is refused, under the catalogue's title. */
const REFUSED_LINK_WHY: Record<keyof typeof REFUSED_SIGN_IN_LINK, string> = {
  used: "A sign-in link works once, so that a copied or forwarded link lets nobody else in.",
  expired: "A sign-in link works for 15 minutes after it was made.",
  unknown: "Check that the whole link was copied; links are long.",
};

type WordsOf = { readonly [Tag in PlatterError["_tag"]]?: (error: Extract<PlatterError, { _tag: Tag }>, text: string) => PageWords };

/** The pages' own words, by tag; status and headers are always the catalogue's. */
const PAGE_WORDS: WordsOf = {
  SignInRequired: (_error, text) => ({
    title: text, paragraphs: ["You are not signed in, or your session has ended (sessions last a working day).", howToGetALink],
  }),
  SignInRefused: (error, text) => ({ title: text, paragraphs: [REFUSED_LINK_WHY[error.reason], howToGetALink] }),
  FormRefused: (_error, text) => ({
    title: text,
    paragraphs: [
      "It did not come from a page of this Developer area session: it may have been sent by another site, or from a page opened before you signed in again. Nothing was changed.",
    ],
    back: BACK_TO_KEYS,
  }),
  UnreadableForm: (_error, text) => ({
    title: text, paragraphs: ["It was not sent as a web form, or it was too large. Nothing was changed."], back: BACK_TO_KEYS,
  }),
  UnknownPage: notFoundWords,
  NotFound: notFoundWords,
  TooManyActions: (error) => ({
    title: `Too many ${error.what} for now`,
    paragraphs: [
      `Your organization may make ${error.allowed} ${error.what} every ${inWords(Math.round(error.windowMs / 1000))}, and has. Nothing was done. Try again in ${inWords(error.retryAfterSeconds)}.`,
    ],
    back: { href: error.back, label: "Go back" },
  }),
  TooManyFailedSignIns: (error) => ({
    title: "Too many failed sign-ins from your network",
    paragraphs: [
      `Sign-in links or sessions that were not valid were used from your network too often. Try again in ${inWords(error.retryAfterSeconds)}.`,
      howToGetALink,
    ],
  }),
  TooManyPageLoads: (error) => ({
    title: "Too many pages loading at once",
    paragraphs: [`Your organization may load ${error.allowed} pages of the Developer area at a time, and is. Nothing was done. Please try again in a moment.`],
    back: BACK_TO_KEYS,
  }),
  // The server lacks the key the endpoint's secret was sealed with: nothing the developer can change; the operator must add it.
  SecretKeyUnavailable: (_error, text) => ({
    title: "This signing secret cannot be used on this server",
    paragraphs: [text, "Ask your Platter contact to configure that key; then try again."],
    back: { href: "/webhooks", label: "Back to webhooks" },
  }),
  DatabaseUnavailable: () => ({ title: "The Developer area is briefly unavailable", paragraphs: ["Nothing was changed. Please try again in a moment."] }),
  ShuttingDown: () => ({ title: "The Developer area is restarting", paragraphs: ["Nothing more was done. Please try again in a moment."] }),
};

/** An error's page: the catalogue's status and headers, the page's own words or the catalogue's text. */
export const errorPage = (error: PlatterError): { readonly status: number; readonly headers: Readonly<Record<string, string>>; readonly page: string } => {
  const answer = errorAnswer(error);
  const words = (PAGE_WORDS[error._tag] as ((error: PlatterError, text: string) => PageWords) | undefined)?.(error, answer.text) ??
    { title: answer.text, paragraphs: ["Nothing was changed."], back: BACK_TO_KEYS };
  return { status: answer.status, headers: answer.headers ?? {}, page: messagePage(words.title, words.paragraphs, words.back) };
};

/** What a form's change came to: its value, or a refusal its page shows beside the field (the catalogue's status and text). */
export type FormOutcome<A, Tag extends string> =
  | { readonly done: true; readonly value: A }
  | { readonly done: false; readonly tag: Tag; readonly refusal: ErrorAnswer };

/**
 * `change` with the refusals `tags` as a `FormOutcome`, for a form that shows them beside its field
 * and keeps what was entered (nothing was written); every other failure goes on to `errorPages`.
 * The one way a route turns an error into what it shows: the catalogue's answer, never its own.
 */
export const shownOnForm = <A, E extends PlatterError, R, const Tag extends E["_tag"]>(
  change: Effect.Effect<A, E, R>,
  ...tags: ReadonlyArray<Tag>
): Effect.Effect<FormOutcome<A, Tag>, Exclude<E, { readonly _tag: Tag }>, R> =>
  change.pipe(
    Effect.map((value): FormOutcome<A, Tag> => ({ done: true, value })),
    Effect.catchIf(
      (error: E): error is Extract<E, { readonly _tag: Tag }> => (tags as ReadonlyArray<string>).includes(error._tag),
      (refused) => Effect.succeed<FormOutcome<A, Tag>>({ done: false, tag: refused._tag as Tag, refusal: errorAnswer(refused) }),
    ),
  ) as Effect.Effect<FormOutcome<A, Tag>, Exclude<E, { readonly _tag: Tag }>, R>;

/** The page a defect is answered with: opaque, the details only in the log. */
const DEFECT_PAGE = () => messagePage("Something went wrong", ["This is our fault and has been logged. Nothing was changed; please try again."]);

/** What the operator must hear of an expected error (an outage, a missing key), logged once here; nothing for the others. */
const logExpected = (logger: Logger, ctx: Context, error: PlatterError): void => {
  // The operator's to mend: said in the log too, with the key this process lacks.
  if (error._tag === "SecretKeyUnavailable") {
    logger.warn({ keyId: error.keyId, path: loggedPath(ctx) }, "a stored secret is sealed with a key SECRET_ENCRYPTION_KEYS does not hold");
  }
  if (error._tag === "DatabaseUnavailable") logger.error({ err: loggedError(error.reason, ctx), path: loggedPath(ctx) }, "database unavailable");
};

/** Renders anything thrown below as its page (`/cli/…`: its JSON); defects are logged (tokens redacted) and answered with an opaque 500. */
export const errorPages =
  (logger: Logger): Middleware =>
  async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      // A sign-in path carries a live link's token: never logged as it is.
      if (isPlatterError(thrown)) logExpected(logger, ctx, thrown);
      else logger.error({ err: loggedError(thrown, ctx), method: ctx.method, path: loggedPath(ctx) }, "unhandled error");
      if (ctx.path.startsWith("/cli/")) {
        const answer = jsonAnswer(thrown);
        ctx.status = answer.status;
        ctx.set(answer.headers);
        ctx.body = answer.body;
        return;
      }
      const answer = isPlatterError(thrown) ? errorPage(thrown) : { status: 500, headers: {}, page: DEFECT_PAGE() };
      ctx.status = answer.status;
      ctx.set(answer.headers);
      ctx.type = "text/html; charset=utf-8";
      ctx.body = answer.page;
    }
  };
