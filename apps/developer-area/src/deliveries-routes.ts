import type Router from "@koa/router";
import { Deliveries, WebhookEndpoints } from "@platter/application";
import { deliveryLogListing, parseDeliveryLogFilter, parsePageRequest, parseRecordId, readUtcTime, UnknownPage } from "@platter/domain";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import { type Effect, Result } from "effect";
import type { Context, Middleware } from "koa";
import { allowRedoc, apiReferencePage, openApiJson } from "./api-reference.ts";
import { eventCatalogPage } from "./catalog-page.ts";
import { deliveriesPage, filterQuery, type LogPageState, messagePage, messagePath } from "./deliveries-pages.ts";
import type { SignedIn } from "./layout.ts";
import { limited } from "./organization-limits.ts";
import { page, redirect } from "./page-responses.ts";
import { type FormRoute, sessionOf } from "./session.ts";

/**
 * The Deliveries, Event catalog and API reference routes. The log and a message are read as the
 * session (`Deliveries`), so another organization's message is the 404 page and its deliveries are
 * never listed; replays are `Deliveries.replay`/`replayMessage`/`replayFailed` (as `platter
 * deliveries retry`: a finished delivery is sent again, a pending one is tried now), checked (origin
 * and form token) first, and audited by the service when they changed something.
 */

/** What these routes share with the area's other routes. */
export interface DeliveryRouteKit {
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** Adds a signed-in POST route, its form checked first (`formRoutes`). */
  readonly post: FormRoute;
  /** The header's organization name and the session's form token. */
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program of the request `ctx` (see `runProgram`; a GET's reads may go to a replica). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** Rows per page of the log. */
export const LOG_PAGE_SIZE = 50;

/** A message's envelope id as it appears in a path (`evt_` and the hex the database makes); anything else names nothing. */
const ENVELOPE_ID = /^evt_[0-9A-Za-z]{1,64}$/;

const envelopeIdOf = (ctx: Context): string => {
  const id = String(ctx.params["envelopeId"]);
  if (!ENVELOPE_ID.test(id)) throw new UnknownPage();
  return id;
};

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What a page says after a replay it was redirected from (`?replayed=n`). */
const replayedNotice = (query: Context["query"]): string | undefined => {
  const text = query["replayed"];
  if (typeof text !== "string" || !/^\d{1,9}$/.test(text)) return undefined;
  const count = Number(text);
  return count === 0
    ? "Nothing to replay: every delivery concerned is already being sent."
    : `${plural(count, "delivery is", "deliveries are")} due again: ${count === 1 ? "it is" : "they are"} sent within seconds, with the same envelope id and bytes.`;
};

/** Adds the Deliveries, Event catalog and API reference routes to `router`. */
export const addDeliveryRoutes = (router: Router, kit: DeliveryRouteKit): void => {
  const { signedInOnly, post, signedIn, run } = kit;
  const endpointsOf = (ctx: Context, session: DeveloperSession) => run(ctx, WebhookEndpoints.list(session));

  router.get("/deliveries", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const filter = parseDeliveryLogFilter(ctx.query);
    const pageRequest = parsePageRequest(deliveryLogListing, { limit: String(LOG_PAGE_SIZE), cursor: ctx.query["cursor"] });
    const endpoints = await endpointsOf(ctx, session);
    const notice = replayedNotice(ctx.query);
    if (Result.isFailure(filter) || Result.isFailure(pageRequest)) {
      const entered = Object.fromEntries(["status", "type", "endpoint", "from", "to"].map((name) => [name, String(ctx.query[name] ?? "")]));
      const error = Result.isFailure(filter) ? filter.failure.message : "This page link is not valid: start again from the newest deliveries.";
      const state: LogPageState = { filter: {}, entered, error, endpoints, deeper: false };
      return page(ctx, 400, deliveriesPage(await signedIn(ctx, session), state, undefined));
    }
    // Another organization's endpoint, or none: the 404 page, as on every other route.
    const endpointId = filter.success.endpointId;
    if (endpointId !== undefined && !endpoints.some((endpoint) => endpoint.id === endpointId)) throw new UnknownPage();
    const log = await run(ctx, Deliveries.log(session, filter.success, pageRequest.success));
    const state: LogPageState = {
      filter: filter.success, endpoints, deeper: pageRequest.success.after !== undefined, ...(notice === undefined ? {} : { notice }),
    };
    page(ctx, 200, deliveriesPage(await signedIn(ctx, session), state, log));
  });

  post("/deliveries/replay-failed", limited("replays", (_ctx, form) => `/deliveries${filterQuery({ endpointId: parseRecordId(form["endpoint"] ?? "") })}`), async (ctx, form, session) => {
    const endpointId = parseRecordId(form["endpoint"] ?? "");
    if (endpointId === undefined) throw new UnknownPage();
    // A refused form (a 400 page) gives its replay back (`limited`).
    const sinceText = form["since"] ?? "";
    const since = readUtcTime(sinceText, "since");
    if (Result.isFailure(since)) {
      const endpoints = await endpointsOf(ctx, session);
      if (!endpoints.some((endpoint) => endpoint.id === endpointId)) throw new UnknownPage();
      const state: LogPageState = {
        filter: { endpointId }, endpoints, deeper: false,
        error: sinceText.trim() === "" ? "Choose the time to replay failed messages from (UTC)." : since.failure.message,
      };
      const log = await run(ctx, Deliveries.log(session, { endpointId }, { limit: LOG_PAGE_SIZE, after: undefined }));
      return page(ctx, 400, deliveriesPage(await signedIn(ctx, session), state, log));
    }
    const { retried } = await run(ctx, Deliveries.replayFailed(session, endpointId, since.success));
    redirect(ctx, `/deliveries${filterQuery({ endpointId }, { replayed: String(retried) })}`);
  });

  router.get("/deliveries/:envelopeId", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const message = await run(ctx, Deliveries.message(session, envelopeIdOf(ctx)));
    page(ctx, 200, messagePage(await signedIn(ctx, session), message, replayedNotice(ctx.query)));
  });

  post("/deliveries/:envelopeId/replay", limited("replays", (ctx) => messagePath(envelopeIdOf(ctx))), async (ctx, form, session) => {
    const envelopeId = envelopeIdOf(ctx);
    const deliveryField = form["delivery"];
    // One delivery, and only one of this message, or all of them.
    const deliveryId = deliveryField === undefined ? undefined : parseRecordId(deliveryField);
    if (deliveryField !== undefined && deliveryId === undefined) throw new UnknownPage();
    const { retried } = await run(ctx, 
      deliveryId === undefined ? Deliveries.replayMessage(session, envelopeId) : Deliveries.replay(session, deliveryId, envelopeId),
    );
    redirect(ctx, `${messagePath(envelopeId)}?replayed=${retried}`);
  });

  router.get("/event-catalog", signedInOnly, async (ctx) => {
    page(ctx, 200, eventCatalogPage(await signedIn(ctx, sessionOf(ctx))));
  });

  router.get("/api-reference", signedInOnly, async (ctx) => {
    allowRedoc(ctx);
    page(ctx, 200, apiReferencePage(await signedIn(ctx, sessionOf(ctx))));
  });

  router.get("/api-reference/openapi.json", signedInOnly, (ctx) => {
    ctx.type = "application/json; charset=utf-8";
    ctx.body = openApiJson();
  });
};
