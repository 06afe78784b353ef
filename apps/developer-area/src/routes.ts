import Router from "@koa/router";
import { ApiKeys, DeveloperAreaSessions, RequestLogs, Sandbox } from "@platter/application";
import {
  ACCESS_LEVELS, type Access, checkKeyLifetime, type DatabaseUnavailable, deviceHint, KEY_LIFETIME_CHOICES, parseApiKeyName, parsePageRequest, parseRecordId,
  parseRequestLogFilter, pickChoice, requestLogListing, ROLL_OVERLAP_CHOICES, SignInRefused, UnknownPage,
} from "@platter/domain";
import { type DeveloperSession, DeveloperSessions, onReplica, type RequestRuntime } from "@platter/persistence";
import { Result } from "effect";
import type { Context } from "koa";
import type { RequestHistorySettings, WebhookEndpointSettings } from "@platter/ops";
import type { SignedIn } from "./layout.ts";
import { shownOnForm } from "./error-pages.ts";
import { runProgram } from "./run-program.ts";
import { page, recordIdOf, redirect } from "./page-responses.ts";
import {
  apiKeysPage, confirmRevokePage, confirmRollPage, continueSignInPage, createdKeyPage, type CreateForm, howToGetALink, messagePage,
} from "./pages.ts";
import { limited, type OrganizationLimits, unlimited } from "./organization-limits.ts";
import type { FailedLookups } from "./failed-lookups.ts";
import type { PageLoads } from "./page-loads.ts";
import { addWebhookRoutes } from "./webhooks-routes.ts";
import { requestLogPage } from "./request-log-pages.ts";
import { addDeliveryRoutes } from "./deliveries-routes.ts";
import { addSessionRoutes } from "./sessions-routes.ts";
import { addAuditRoutes } from "./audit-routes.ts";
import { addSandboxRoutes } from "./sandbox-routes.ts";
import { addAlertRoutes, type AlertSettings } from "./alerts-routes.ts";
import {
  clearSessionCookie, type CookiePolicy, findSession, formRoutes, requireSession, sessionOf, setSessionCookie, signInRoute,
  wroteRecently,
} from "./session.ts";

/**
 * The Developer area's routes. Every page of an organization's data needs a live session, and
 * reaches the data as the session, through the application services (`@platter/application`) on the
 * session's scope; every POST is checked (origin and form token) before anything is done, and every
 * change is audited in its own transaction by the service that makes it.
 */

/** What the routes need to know about where the area is served. */
export interface RouteSettings {
  /** The area's public origin: POSTs must come from it, and links start with it. */
  readonly origin: string;
  readonly cookies: CookiePolicy;
  /** The SSRF guard's setting, the secret rotation's overlap and the endpoints' limit, as the CLI reads them. */
  readonly webhooks: WebhookEndpointSettings;
  /** How many working API keys an organization may have (`API_KEYS_PER_ORGANIZATION`). */
  readonly apiKeysPerOrganization: number;
  /** The organization's limits on the actions that make work (each POST route names its own). */
  readonly limits: OrganizationLimits;
  /** Alert addresses: how many an organization may list, and the sender of their confirmation links (none: no e-mail). */
  readonly alerts: AlertSettings;
  /** What the request log keeps, said on its page. */
  readonly requestHistory: RequestHistorySettings;
  /** Failed session and sign-in link lookups per client address, refused before the database past the limit. */
  readonly lookups: FailedLookups;
  /** Signed-in requests in flight per organization. */
  readonly pageLoads: PageLoads;
  /**
   * Set when the platform has read replicas: a GET page reads from them unless its browser sent a
   * form within this window (then from the primary, so it sees what it just changed).
   */
  readonly readYourWritesMs?: number | undefined;
}

const idOf = (ctx: Context): number => recordIdOf(ctx);

/**
 * The Referrer-Policy of the page a sign-in link opens: `strict-origin` sends at most the area's
 * origin, never the path that holds the token. Not `no-referrer`: browsers then send `Origin: null`
 * with the page's POST (Fetch standard), which the Origin check would refuse.
 */
const SIGN_IN_REFERRER_POLICY = "strict-origin";

/** The area's routes on the platform's storage services. */
export const createRouter = (runtime: RequestRuntime, settings: RouteSettings): Router => {
  const router = new Router({ strict: true, sensitive: true });
  const signedInOnly = requireSession(runtime, settings.cookies, settings.lookups, settings.pageLoads);
  const post = formRoutes(router, signedInOnly, settings.origin, settings.limits, settings.readYourWritesMs === undefined ? undefined : {
    cookies: settings.cookies,
    windowMs: settings.readYourWritesMs,
  });
  const run = <A, E>(ctx: Context, program: Parameters<typeof runProgram<A, E>>[1]) =>
    runProgram(runtime, settings.readYourWritesMs !== undefined && ctx.method === "GET" && !wroteRecently(ctx, settings.cookies) ? onReplica(program) : program);

  /**
   * A sign-in link's lookup (`program`), once its client address may look one up (else 429 before
   * the database); a link that is not valid (`SignInRefused`) counts against the address.
   */
  const linkLookup = async <A>(ctx: Context, program: Parameters<typeof runProgram<A, SignInRefused | DatabaseUnavailable>>[1]): Promise<A> => {
    const address = await settings.lookups.admit(ctx);
    try {
      return await run(ctx, program);
    } catch (error) {
      if (error instanceof SignInRefused) await settings.lookups.failed(address);
      throw error;
    }
  };

  /** The header's organization name, the session's form token, and whether it is a sandbox (marked on every page). */
  const signedIn = async (ctx: Context, session: DeveloperSession): Promise<SignedIn> => {
    const standing = await run(ctx, Sandbox.standing(session));
    return { organizationName: standing.name, formToken: session.formSecret, sandbox: standing.kind === "sandbox" };
  };

  /** The keys page; `revoked` names a key just revoked, to say so. */
  const listPage = async (ctx: Context, status: number, form?: CreateForm, revoked?: number) => {
    const session = sessionOf(ctx);
    // Newest first: the key just made is at the top.
    const keys = [...(await run(ctx, ApiKeys.list(session)))].reverse();
    const gone = keys.find((key) => key.id === revoked && key.revoked_at !== null);
    const notice = gone === undefined ? undefined : `${gone.name || `Key ${gone.id}`} was revoked: the API refuses it from now on.`;
    page(ctx, status, apiKeysPage(await signedIn(ctx, session), keys, form, notice));
  };

  router.get("/", async (ctx) => {
    redirect(ctx, (await findSession(ctx, runtime, settings.cookies, settings.lookups)) === undefined ? "/sign-in" : "/api-keys");
  });

  // Where "sign in" leads without a link: the page that says how to get one.
  router.get("/sign-in", signedInOnly, (ctx) => redirect(ctx, "/api-keys"));

  // Opening a link only shows where it leads: a mail or chat link preview's GET must not use it up.
  router.get("/sign-in/:token", async (ctx) => {
    // The token is in this address: nothing on the way out may carry it as a referrer.
    ctx.set("referrer-policy", SIGN_IN_REFERRER_POLICY);
    const token = String(ctx.params["token"]);
    const link = await linkLookup(ctx, DeveloperSessions.use((all) => all.checkLink(token)));
    page(ctx, 200, continueSignInPage(link.organizationName, token));
  });

  // The page's button: uses the link and starts the session. There is no session (so no form
  // token) yet; the Origin check stops another site from signing a browser in to its organization.
  signInRoute(router, "/sign-in/:token", settings.origin, async (ctx) => {
    // Only a few words derived from the User-Agent are kept (`Chrome on Linux`), never the header.
    const hint = deviceHint(ctx.get("user-agent"));
    const opened = await linkLookup(ctx, DeveloperSessions.use((all) => all.signIn(String(ctx.params["token"]), hint)));
    setSessionCookie(ctx, settings.cookies, opened.token, opened.expires_at);
    redirect(ctx, "/api-keys");
  });

  // Signing out ends this session, audited like ending it from the Sessions page.
  post("/sign-out", unlimited("signing out ends this session: it makes nothing, and a session ends once"), async (ctx, _form, session) => {
    await run(ctx, DeveloperAreaSessions.end(session, session.sessionId));
    clearSessionCookie(ctx, settings.cookies);
    redirect(ctx, "/signed-out");
  });

  router.get("/signed-out", (ctx) => {
    page(ctx, 200, messagePage("You are signed out", ["Your Developer area session has ended on this browser.", howToGetALink]));
  });

  router.get("/api-keys", signedInOnly, async (ctx) => {
    await listPage(ctx, 200, undefined, parseRecordId(String(ctx.query["revoked"] ?? "")));
  });

  post("/api-keys", limited("keyChanges", "/api-keys"), async (ctx, form, session) => {
    const entered = { name: form["name"] ?? "", access: form["access"] ?? "", expires: form["expires"] ?? "never" };
    const name = parseApiKeyName(entered.name);
    const accessKnown = (ACCESS_LEVELS as readonly string[]).includes(entered.access);
    const lifetime = pickChoice(KEY_LIFETIME_CHOICES, entered.expires, "when the key expires");
    if (Result.isFailure(name) || !accessKnown || Result.isFailure(lifetime)) {
      // Each problem under its own field; an unknown access level leaves neither choice ticked.
      return listPage(ctx, 400, {
        ...entered,
        ...(Result.isFailure(name) ? { nameError: name.failure.message } : {}),
        ...(accessKnown ? {} : { accessError: "Choose read-only or read/write access" }),
        ...(Result.isFailure(lifetime) ? { expires: "never", expiresError: lifetime.failure.message } : {}),
      });
    }
    const access = entered.access as Access;
    const lifetimeMs = Result.getOrThrow(checkKeyLifetime(lifetime.success.ms));
    // One key too many: said beside the name, the form kept, nothing written.
    const created = await run(ctx, shownOnForm(ApiKeys.create(session, access, name.success, lifetimeMs, settings.apiKeysPerOrganization), "ApiKeyLimitReached"));
    if (!created.done) return listPage(ctx, 400, { ...entered, nameError: created.refusal.text });
    page(ctx, 201, createdKeyPage(await signedIn(ctx, session), { name: name.success, access, secret: created.value.key }));
  });

  router.get("/api-keys/:id/roll", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const key = await run(ctx, ApiKeys.find(session, idOf(ctx)));
    if (key.revoked_at !== null || key.expired || key.replaced_by !== null) return redirect(ctx, "/api-keys");
    page(ctx, 200, confirmRollPage(await signedIn(ctx, session), key));
  });

  post("/api-keys/:id/roll", limited("keyChanges", "/api-keys"), async (ctx, form, session) => {
    const id = idOf(ctx);
    const overlap = pickChoice(ROLL_OVERLAP_CHOICES, form["overlap"] ?? "", "how long the old key keeps working");
    if (Result.isFailure(overlap)) {
      return page(ctx, 400, confirmRollPage(await signedIn(ctx, session), await run(ctx, ApiKeys.find(session, id)), overlap.failure.message));
    }
    const rolled = await run(ctx, shownOnForm(ApiKeys.roll(session, id, overlap.success.ms), "InvalidTransition"));
    // Already rolled, revoked or expired meanwhile (a second click, an old page): the list says how it stands.
    if (!rolled.done) return redirect(ctx, "/api-keys");
    const key = await run(ctx, ApiKeys.find(session, rolled.value.id));
    page(ctx, 201, createdKeyPage(await signedIn(ctx, session), {
      name: key.name, access: key.access, secret: rolled.value.key, oldKeyWorksUntil: rolled.value.old_key_expires_at,
    }));
  });

  router.get("/api-keys/:id/revoke", signedInOnly, async (ctx) => {
    const id = idOf(ctx);
    const session = sessionOf(ctx);
    const key = await run(ctx, ApiKeys.find(session, id));
    if (key.revoked_at !== null) return redirect(ctx, "/api-keys");
    page(ctx, 200, confirmRevokePage(await signedIn(ctx, session), key));
  });

  post("/api-keys/:id/revoke", unlimited("a key is revoked once (again changes and audits nothing), so revokes are bounded by key creates"), async (ctx, _form, session) => {
    const id = idOf(ctx);
    // Revoking a revoked key (a second click, an old page) changes nothing, so nothing is recorded.
    await run(ctx, ApiKeys.revoke(session, id));
    redirect(ctx, `/api-keys?revoked=${id}`);
  });

  router.get("/requests", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const filter = parseRequestLogFilter(ctx.query);
    const pageRequest = parsePageRequest(requestLogListing, { limit: "50", cursor: ctx.query["cursor"] });
    const keys = await run(ctx, ApiKeys.list(session));
    const shared = {
      keys, successPercent: settings.requestHistory.successPercent, retentionDays: Math.round(settings.requestHistory.retentionMs / 86_400_000),
    };
    if (Result.isFailure(filter) || Result.isFailure(pageRequest)) {
      const entered = Object.fromEntries(["key", "status", "route", "request", "from", "to"].map((name) => [name, String(ctx.query[name] ?? "")]));
      const error = Result.isFailure(filter) ? filter.failure.message : "This page link is not valid: start again from the newest requests.";
      return page(ctx, 400, requestLogPage(await signedIn(ctx, session), { ...shared, filter: {}, entered, error, deeper: false }, undefined));
    }
    // Another organization's key, or none: the 404 page, as on every other route.
    const keyId = filter.success.keyId;
    if (keyId !== undefined && !keys.some((key) => key.id === keyId)) throw new UnknownPage();
    const log = await run(ctx, RequestLogs.list(session, filter.success, pageRequest.success));
    page(ctx, 200, requestLogPage(await signedIn(ctx, session), { ...shared, filter: filter.success, deeper: pageRequest.success.after !== undefined }, log));
  });

  addWebhookRoutes(router, { settings, signedInOnly, post, signedIn, run });
  addDeliveryRoutes(router, { signedInOnly, post, signedIn, run });
  addSessionRoutes(router, { cookies: settings.cookies, signedInOnly, post, signedIn, run });
  addAuditRoutes(router, { signedInOnly, signedIn, run });
  addSandboxRoutes(router, { cookies: settings.cookies, signedInOnly, post, signedIn, run });
  addAlertRoutes(router, { origin: settings.origin, alerts: settings.alerts, signedInOnly, post, signedIn, run });

  return router;
};
