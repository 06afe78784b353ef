import { createHash, timingSafeEqual } from "node:crypto";
import { DeveloperSessions, type DeveloperSession, type RequestRuntime } from "@platter/persistence";
import { Effect } from "effect";
import type Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { readForm } from "./form-body.ts";
import type { FailedLookups } from "./failed-lookups.ts";
import { declareRouteLimit, type OrganizationLimits, type RouteLimit, unlimited } from "./organization-limits.ts";
import { FormRefused, SignInRequired } from "@platter/domain";
import type { PageLoads } from "./page-loads.ts";
import { runProgram } from "./run-program.ts";

/**
 * The session cookie and the checks of every request that needs a session: the cookie's token
 * authenticates the session (the only way to its organization's scope), and every POST must come
 * from the area's own origin and carry the session's form token.
 */

/**
 * How the session cookie is written. Over https: the `__Host-` name (bound to this host),
 * `SameSite=None; Secure; Partitioned`, so the area works inside a frame of the catering
 * application's site (the cookie is kept per embedding site, CHIPS); cross-site request forgery is
 * stopped by the Origin check and the form token of every POST, not by the cookie. Over plain
 * http, `SameSite=Lax`: browsers refuse `SameSite=None` without `Secure`, so embedding from another
 * site needs the https public URL.
 */
export interface CookiePolicy {
  readonly secure: boolean;
}

const cookieName = (policy: CookiePolicy) => (policy.secure ? "__Host-platter_developer_session" : "platter_developer_session");

const cookie = (policy: CookiePolicy, value: string, maxAgeSeconds: number, name = cookieName(policy)) =>
  `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; ${policy.secure ? "SameSite=None; Secure; Partitioned" : "SameSite=Lax"}`;

/** Sets the session cookie to `token` until `expiresAt` (see `CookiePolicy` for its attributes). */
export const setSessionCookie = (ctx: Context, policy: CookiePolicy, token: string, expiresAt: string): void => {
  ctx.set("set-cookie", cookie(policy, token, Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000))));
};

/** Removes the session cookie from the browser. */
export const clearSessionCookie = (ctx: Context, policy: CookiePolicy): void => {
  ctx.set("set-cookie", cookie(policy, "", 0));
};

/** The session of each request that has one, as authentication found it. */
const sessions = new WeakMap<Context, DeveloperSession>();

/**
 * The request's live session, or `undefined` (no cookie, an unknown, expired or ended session).
 * A cookie is looked up only if its client address has failures left (`FailedLookups`: otherwise
 * `TooManyFailedSignIns`, 429, before the database); one that finds no session counts against the
 * address, and is removed from the browser so an honest one stops sending it.
 */
export const findSession = async (
  ctx: Context, runtime: RequestRuntime, policy: CookiePolicy, lookups: FailedLookups,
): Promise<DeveloperSession | undefined> => {
  const known = sessions.get(ctx);
  if (known !== undefined) return known;
  const token = ctx.cookies.get(cookieName(policy));
  if (token === undefined || token === "") return undefined;
  const address = await lookups.admit(ctx, token);
  // An unknown, expired or ended session is "not signed in"; a database outage is thrown as usual.
  const session = await runProgram(
    runtime,
    DeveloperSessions.use((all) => all.authenticate(token)).pipe(Effect.catchTag("Unauthenticated", () => Effect.succeed(undefined))),
  );
  if (session === undefined) {
    await lookups.failed(address, token);
    clearSessionCookie(ctx, policy);
    return undefined;
  }
  lookups.live(token);
  sessions.set(ctx, session);
  return session;
};

/**
 * Requires a live session (otherwise the "sign in" page, 401), then runs the rest of the request
 * as one of its organization's page loads in flight (`PageLoads`: one past the bound is a 429 page).
 */
export const requireSession =
  (runtime: RequestRuntime, policy: CookiePolicy, lookups: FailedLookups, pageLoads: PageLoads): Middleware =>
  async (ctx, next) => {
    const session = await findSession(ctx, runtime, policy, lookups);
    if (session === undefined) throw new SignInRequired();
    await pageLoads.hold(session.scope.organizationId, next);
  };

/** The session of a request that passed `requireSession`. */
export const sessionOf = (ctx: Context): DeveloperSession => {
  const session = sessions.get(ctx);
  if (session === undefined) throw new SignInRequired();
  return session;
};

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * Refuses (`FormRefused`, 403) a POST not sent from a page of the area: a browser's `Origin`, when
 * it sends one, must be exactly `origin`, and `Sec-Fetch-Site`, when sent, must say same-origin.
 * Both hold inside a frame on another site too: a form of the framed page is sent from the area's
 * own origin.
 */
const requireOwnOrigin = (ctx: Context, origin: string): void => {
  const sentFrom = ctx.get("origin");
  const site = ctx.get("sec-fetch-site");
  if ((sentFrom !== "" && sentFrom !== origin) || (site !== "" && site !== "same-origin")) throw new FormRefused();
};

/** A signed-in POST's work, given its form and session once both are checked. */
type FormAction = (ctx: Context, form: Readonly<Record<string, string>>, session: DeveloperSession) => Promise<void>;

/**
 * Marks a browser that just sent a form, for the read-your-writes window: with read replicas, its
 * pages read from the primary while the cookie lasts, so the page after a change shows it. The
 * cookie holds nothing but its own expiry; dropping it early only costs that browser a stale page.
 */
export interface WriteMark {
  readonly cookies: CookiePolicy;
  readonly windowMs: number;
}

const wroteCookieName = (policy: CookiePolicy) => (policy.secure ? "__Host-platter_wrote" : "platter_wrote");

/** Whether this request's browser sent a form within the read-your-writes window (see `WriteMark`). */
export const wroteRecently = (ctx: Context, policy: CookiePolicy): boolean => ctx.cookies.get(wroteCookieName(policy)) !== undefined;

/**
 * Adds a signed-in POST route at `path` (see `formRoutes`), counted against the organization's
 * `limit` (`limited(action, back)`), or declared `unlimited(reason)`.
 */
export type FormRoute = (path: string, limit: RouteLimit, action: FormAction) => void;

/**
 * The area's one way to add a signed-in POST route: the session is required (`signedInOnly`) and
 * the form checked (`readSessionForm`: sent from `origin`, with the session's form token) before
 * the action runs, so no route can forget either; then the action is counted against the
 * organization's limit its registration names (`OrganizationLimits.counted`: over it, the "too
 * many" page and nothing done). Lint forbids `router.post` anywhere else. With `wrote` (read
 * replicas), the browser is marked for the read-your-writes window first.
 */
export const formRoutes =
  (router: Router, signedInOnly: Middleware, origin: string, limits: OrganizationLimits, wrote?: WriteMark): FormRoute =>
  (path, limit, action) => {
    declareRouteLimit(router, path, limit);
    router.post(path, signedInOnly, async (ctx) => {
      const form = await readSessionForm(ctx, origin);
      if (wrote !== undefined) {
        ctx.append("set-cookie", cookie(wrote.cookies, "1", Math.ceil(wrote.windowMs / 1000), wroteCookieName(wrote.cookies)));
      }
      const session = sessionOf(ctx);
      await limits.counted(limit, session.scope.organizationId, ctx, form, () => action(ctx, form, session));
    });
  };

/**
 * Adds the sign-in link's POST: there is no session (so no form token) yet, so its origin is
 * checked before `action` runs (the link's one-use token is the secret); its answer sends no
 * referrer, even when refused.
 */
export const signInRoute = (router: Router, path: string, origin: string, action: (ctx: Context) => Promise<void>): void =>
  linkRoute(router, path, origin, "no organization yet: a sign-in link is used once, so each link opens at most one session", action);

/**
 * A POST without a session that a mailed link's page sends back (a sign-in link's, an alert
 * address's confirmation): only from the area's own origin, no referrer; `reason` says why it needs no limit.
 */
export const linkRoute = (router: Router, path: string, origin: string, reason: string, action: (ctx: Context) => Promise<void>): void => {
  declareRouteLimit(router, path, unlimited(reason));
  router.post(path, async (ctx) => {
    ctx.set("referrer-policy", "no-referrer");
    requireOwnOrigin(ctx, origin);
    await action(ctx);
  });
};

/**
 * A POST's form, once it is known to be this session's own: sent from the area's origin
 * (`requireOwnOrigin`) and carrying the session's form token. Otherwise `FormRefused` (403),
 * before anything is done.
 */
const readSessionForm = async (ctx: Context, origin: string): Promise<Readonly<Record<string, string>>> => {
  requireOwnOrigin(ctx, origin);
  const session = sessionOf(ctx);
  const form = await readForm(ctx);
  const token = form["form_token"] ?? "";
  // Compared as digests: equal length, constant time.
  if (!timingSafeEqual(digest(token), digest(session.formSecret))) throw new FormRefused();
  return form;
};
