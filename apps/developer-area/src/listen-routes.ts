import type Router from "@koa/router";
import { AlertRecipients, LocalForwarding, MessageFeed } from "@platter/application";
import {
  type AddressFailures, clientAddressResolver, KeyRateLimits, limitedAuthentication, type RateLimitSettings,
  readJsonBody, type TrustedProxies,
} from "@platter/ops";
import {
  type ApiKeyActor, Forbidden, MailNotConfigured, parseAlertAddressBody, parseListenerReport, parseListenRequest, parseMessageFeedRequest, parseTriggerBody, ShuttingDown,
} from "@platter/domain";
import { type RequestRuntime, type RequestStorage, requestOutcome, runRequest } from "@platter/persistence";
import { Effect, Result } from "effect";
import type { Context } from "koa";
import type { Logger } from "pino";
import { type AlertSettings, mailConfirmationLink } from "./alerts-routes.ts";
import { ListenerStreams } from "./listener-streams.ts";
import { declareRouteLimit, limited, type OrganizationLimits, type RouteLimit, unlimited } from "./organization-limits.ts";
import { recordIdOf } from "./page-responses.ts";

/**
 * The CLI's routes, under `/cli/`, for an integrator's own tools with an API key in
 * `Authorization: Bearer …` (no session, no cookie, so nothing a browser could be tricked into
 * sending): `platter listen`'s stream of its listener's deliveries (`GET /cli/listen`, server-sent
 * events) and its reports of what the local URL answered (`POST /cli/listen/attempts`),
 * `platter trigger` in a sandbox (`POST /cli/trigger`), and the message feed a receiver pulls
 * (`GET /cli/messages`: the SDK's `messages.list`, `platter messages tail`), and the organization's alert
 * e-mail addresses (`/cli/alerts`: `platter alerts`, as the Alerts page keeps them). Each needs a read/write key (a
 * listener's report, a lease that only such a key's listener holds). Answers and errors are JSON (error-pages.ts).
 */

/** What these routes need besides the runtime. */
export interface ListenRouteSettings {
  /** The header carrying the spec's hex signature (`WEBHOOK_SIGNATURE_HEADER`), as the dispatcher signs. */
  readonly signatureHeader: string;
  /** Listeners connected at once per organization (`LISTENERS_PER_ORGANIZATION`). */
  readonly listenersPerOrganization: number;
  /** The organization's limits: a trigger counts as a test event. */
  readonly limits: OrganizationLimits;
  /**
   * The API's rate limits (`RATE_LIMIT*`), applied to these routes as the API applies them (per key,
   * per organization, failed authentications per address), counted in this process.
   */
  readonly rateLimits: RateLimitSettings;
  /** Which proxies may tell the client's address (`TRUST_PROXY`), for the failed authentications' count. */
  readonly trustProxy: TrustedProxies;
  /** The process's failed authentications per client address, shared with the session and sign-in link lookups. */
  readonly addressFailures: AddressFailures;
  /** The area's public origin: an added alert address's confirmation link starts with it. */
  readonly origin: string;
  /** How alert addresses are kept and confirmed, as the Alerts page keeps them. */
  readonly alerts: AlertSettings;
}

/** Adds the CLI's routes to `router`; returns the streams they open, which the server ends when it stops. */
export const addListenRoutes = (router: Router, runtime: RequestRuntime, settings: ListenRouteSettings, logger: Logger): ListenerStreams => {
  const run = async <A, E>(program: Effect.Effect<A, E, RequestStorage>): Promise<A> =>
    requestOutcome(await runRequest(runtime, program));
  const streams = new ListenerStreams(logger, settings.signatureHeader, run);
  const addressOf = clientAddressResolver(settings.trustProxy);
  const authenticated = limitedAuthentication<ApiKeyActor, RequestStorage>({
    limits: new KeyRateLimits(settings.rateLimits, settings.addressFailures),
    clientAddress: (ctx) => addressOf(ctx.req),
    run: (_ctx, program) => run(program),
    lookup: (secret) => LocalForwarding.authenticate(secret),
  });

  /**
   * The request's key as the actor of what it asks, counted against its limits as the API counts
   * (429 over them): `Unauthenticated` (401) for none, or one that is not live.
   */
  const actorOf = (ctx: Context): Promise<ApiKeyActor> => authenticated(ctx, Effect.succeed);

  /**
   * The CLI's one way to add a POST route: the key is authenticated (and counted against its rate
   * limits) first, then the action counted against the organization's limit its registration names
   * (`OrganizationLimits.counted`, given back when the action refuses), or declared `unlimited(reason)`.
   */
  const cliPost = (path: string, limit: RouteLimit, action: (ctx: Context, actor: ApiKeyActor) => Promise<void>): void => {
    declareRouteLimit(router, path, limit);
    router.post(path, async (ctx) => {
      const actor = await actorOf(ctx);
      await settings.limits.counted(limit, actor.scope.organizationId, ctx, {}, () => action(ctx, actor));
    });
  };

  router.get("/cli/listen", async (ctx) => {
    // A stopping process opens no stream that would hold its shutdown: the CLI reconnects to another instance.
    if (streams.stopping) throw new ShuttingDown();
    const actor = await actorOf(ctx);
    // A read-only key may not listen (LocalForwarding.open refuses it too): refused before its input is read.
    if (actor.scope.access !== "read_write") throw new Forbidden();
    const request = Result.getOrThrow(parseListenRequest(ctx.query));
    const listener = await run(LocalForwarding.open(actor, request, settings.listenersPerOrganization));
    streams.serve(ctx, actor, listener, request);
  });

  const reportsUnlimited = unlimited("a report settles a delivery already sent to this key's listener (once: a second changes nothing); the key's rate limits count each");
  cliPost("/cli/listen/attempts", reportsUnlimited, async (ctx, actor) => {
    const report = Result.getOrThrow(parseListenerReport(await readJsonBody(ctx)));
    const recorded = await run(LocalForwarding.record(actor, report));
    ctx.status = 200;
    ctx.body = { recorded: true, status: recorded.status };
    streams.reported(actor);
  });

  cliPost("/cli/trigger", limited("testEvents", "/sandbox"), async (ctx, actor) => {
    // A refusal gives the count back: a read-only key changes nothing.
    if (actor.scope.access !== "read_write") throw new Forbidden();
    const type = Result.getOrThrow(parseTriggerBody(await readJsonBody(ctx)));
    ctx.status = 201;
    ctx.body = await run(LocalForwarding.trigger(actor, type));
  });

  router.get("/cli/messages", async (ctx) => {
    const actor = await actorOf(ctx);
    const { filter, page } = Result.getOrThrow(parseMessageFeedRequest(ctx.query));
    // On the primary (never `onReplica`): the feed's horizon is read from the primary's open transactions.
    ctx.status = 200;
    ctx.set("cache-control", "no-store");
    ctx.body = await run(MessageFeed.page(actor, filter, page));
  });

  // The organization's alert e-mail addresses, as the Alerts page keeps them, with a read/write key only, as every
  // other /cli/ route: who is mailed when an endpoint fails is the organization's webhook settings, which a
  // read-only key (for the /v1 reads) never sees.
  router.get("/cli/alerts", async (ctx) => {
    const actor = await actorOf(ctx);
    if (actor.scope.access !== "read_write") throw new Forbidden();
    ctx.status = 200;
    ctx.set("cache-control", "no-store");
    ctx.body = { recipients: await run(AlertRecipients.list(actor)) };
  });

  cliPost("/cli/alerts", limited("alertAddresses", "/alerts"), async (ctx, actor) => {
    if (actor.scope.access !== "read_write") throw new Forbidden();
    const email = Result.getOrThrow(parseAlertAddressBody(await readJsonBody(ctx)));
    const mailer = settings.alerts.mailer;
    if (mailer === undefined) throw new MailNotConfigured();
    const added = await run(AlertRecipients.add(actor, email, settings.alerts.recipientsPerOrganization));
    const mailed = await mailConfirmationLink(mailer, settings.origin, added);
    ctx.status = 201;
    ctx.body = { id: added.id, email: added.email, confirmation_mailed: mailed };
  });

  cliPost("/cli/alerts/:id/remove", unlimited("removing an address makes nothing and mails nothing; each address is removed once, and adds are limited"), async (ctx, actor) => {
    if (actor.scope.access !== "read_write") throw new Forbidden();
    const removed = await run(AlertRecipients.remove(actor, recordIdOf(ctx)));
    ctx.status = 200;
    ctx.body = { id: removed.id, email: removed.email, removed: true };
  });

  return streams;
};
