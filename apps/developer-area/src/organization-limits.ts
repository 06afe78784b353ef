import type Router from "@koa/router";
import type { Context } from "koa";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { DeveloperAreaLimits } from "./config.ts";
import { errorAnswer, isPlatterError, TooManyActions } from "@platter/domain";

/**
 * Per-organization limits on the Developer area's actions that make work: test events and replays
 * make the dispatcher send, every endpoint added is one more delivery per message, and key,
 * endpoint and sandbox changes each write rows (a key, a session, demo data, an audit row). Each
 * organization may take `DeveloperAreaLimits` of each per window (rate-limiter-flexible's fixed
 * windows, as the API's key limits), counted in this process's memory: nothing is written per
 * action.
 *
 * Every POST route of the area and of the CLI declares where it is registered what it costs
 * (`limited(action, back)`, or `unlimited(reason)`), and the registration counts it
 * (`OrganizationLimits.counted`): once the session and form token (or the key) are checked, before
 * the route's work, so a refusal does nothing and audits nothing. A route's own refusal (an error
 * status it answers: a bad field, an unknown record, a refused transition, mail not configured) gives the count back, so bad input
 * never spends the organization's allowance, unless the route says its refusal cost work
 * (`refusalCostWork`: a URL the SSRF guard refused after looking its name up). `postRouteLimits`
 * lists every POST route of a router with what it declared.
 */

/** The actions that are limited. */
export type LimitedAction = keyof Omit<DeveloperAreaLimits, "windowMs">;

const LIMITED_ACTIONS: ReadonlyArray<LimitedAction> = [
  "testEvents", "endpointCreates", "replays", "keyChanges", "endpointChanges", "sandboxResets", "sandboxSwitches", "alertAddresses",
];

const WHAT: Readonly<Record<LimitedAction, string>> = {
  testEvents: "test events",
  endpointCreates: "new endpoints",
  replays: "replays",
  keyChanges: "API key changes",
  endpointChanges: "endpoint changes",
  sandboxResets: "sandbox resets",
  sandboxSwitches: "sandbox switches",
  alertAddresses: "alert addresses added (each mails a confirmation link)",
};

/** Where a refused action's page leads back to: a fixed path, or one made from the request and its form. */
type BackLink = string | ((ctx: Context, form: Readonly<Record<string, string>>) => string);

/** What one POST route costs its organization: counted against one of its limits, or nothing, and why. */
export type RouteLimit =
  | { readonly kind: "limited"; readonly action: LimitedAction; readonly back: BackLink }
  | { readonly kind: "unlimited"; readonly reason: string };

/** A route counted against the organization's `action` limit; its "too many" page leads back to `back`. */
export const limited = (action: LimitedAction, back: BackLink): RouteLimit => ({ kind: "limited", action, back });

/** A route that makes no work worth a limit, with the reason (said in the route list's test). */
export const unlimited = (reason: string): RouteLimit => ({ kind: "unlimited", reason });

/** What each router's POST routes declared, by path. */
const declarations = new WeakMap<Router, Map<string, RouteLimit>>();

/** Records that `router`'s POST route `path` costs `limit` (called by the registrations, `formRoutes` and the CLI's). */
export const declareRouteLimit = (router: Router, path: string, limit: RouteLimit): void => {
  const declared = declarations.get(router) ?? new Map<string, RouteLimit>();
  declarations.set(router, declared);
  declared.set(path, limit);
};

/** Every POST route of `router`, read from its stack, with the limit its registration declared (`undefined`: none). */
export const postRouteLimits = (router: Router): ReadonlyArray<{ readonly path: string; readonly limit: RouteLimit | undefined }> =>
  router.stack
    .filter((layer) => layer.methods.includes("POST"))
    .map((layer) => ({ path: String(layer.path), limit: declarations.get(router)?.get(String(layer.path)) }));

/** A route's own refusal that changed nothing (an expected error the catalogue does not call an outage), not an outage in the middle of its work. */
const isRefusal = (thrown: unknown): boolean => isPlatterError(thrown) && errorAnswer(thrown).kind !== "outage";

/** Requests whose refusal cost work (`refusalCostWork`): their count is kept. */
const costlyRefusals = new WeakSet<Context>();

/**
 * Marks the request's refusal as one that cost work (a DNS lookup for a URL the SSRF guard then
 * refused): `counted` keeps its count, so refused lookups are bounded by the limit like accepted ones.
 */
export const refusalCostWork = (ctx: Context): void => {
  costlyRefusals.add(ctx);
};

/** The per-organization limiters of one Developer-area process. */
export class OrganizationLimits {
  private readonly limiters: Readonly<Record<LimitedAction, RateLimiterMemory>>;
  private readonly limits: DeveloperAreaLimits;

  constructor(limits: DeveloperAreaLimits) {
    this.limits = limits;
    const duration = Math.max(1, Math.round(limits.windowMs / 1000));
    this.limiters = Object.fromEntries(
      LIMITED_ACTIONS.map((action) => [action, new RateLimiterMemory({ keyPrefix: action, points: limits[action], duration })]),
    ) as Record<LimitedAction, RateLimiterMemory>;
  }

  /** Counts one `action` of organization `organizationId`; `TooManyActions` (nothing counted against later windows) when over its limit. */
  async consume(organizationId: number, action: LimitedAction, back: string): Promise<void> {
    try {
      await this.limiters[action].consume(String(organizationId));
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      throw new TooManyActions({
        what: WHAT[action],
        allowed: this.limits[action],
        windowMs: this.limits.windowMs,
        retryAfterSeconds: Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)),
        back,
      });
    }
  }

  /**
   * Runs `work`, the route's action, as `limit` says: a limited one is counted first
   * (`TooManyActions` over the limit, `work` not run), and given back when `work` refuses (an error
   * status it answers: a route answers only the refusals it shows beside a field, at the catalogue's
   * status, such as 503 for mail not configured, and throws the rest; or an expected error it throws), since a refusal does nothing; but for one that cost
   * work (`refusalCostWork`).
   */
  async counted(limit: RouteLimit, organizationId: number, ctx: Context, form: Readonly<Record<string, string>>, work: () => Promise<void>): Promise<void> {
    if (limit.kind === "unlimited") return work();
    await this.consume(organizationId, limit.action, typeof limit.back === "string" ? limit.back : limit.back(ctx, form));
    let refused = false;
    try {
      await work();
      refused = ctx.status >= 400;
    } catch (thrown) {
      refused = isRefusal(thrown);
      throw thrown;
    } finally {
      if (refused && !costlyRefusals.has(ctx)) await this.limiters[limit.action].reward(String(organizationId), 1);
    }
  }
}
