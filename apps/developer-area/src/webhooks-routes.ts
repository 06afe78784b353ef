import type Router from "@koa/router";
import { exampleMessage, isWebhookEventType, parseEndpointUrl, parseSubscription } from "@platter/domain";
import type { WebhookEndpointSettings } from "@platter/ops";
import { type DeveloperSession, type RequestStorage, type RequestRuntime, WebhookEndpointRepository } from "@platter/persistence";
import { refusedUrlReason } from "@platter/webhooks";
import { Effect, Result } from "effect";
import type { Context, Middleware } from "koa";
import { audited } from "./audited-change.ts";
import type { SignedIn } from "./layout.ts";
import type { OrganizationLimits } from "./organization-limits.ts";
import { page, recordIdOf, redirect } from "./page-responses.ts";
import { type FormRoute, sessionOf } from "./session.ts";
import {
  confirmRotatePage, EMPTY_ENDPOINT_FORM, type EndpointForm, endpointPage, type EndpointPageState, newEndpointPage,
  testDeliveryPage, webhooksPage,
} from "./webhooks-pages.ts";

/**
 * The Webhooks routes: list, add (the URL through the same SSRF guard and setting as the CLI),
 * reveal and rotate the signing secret, enable/disable, send a test event and follow its delivery.
 * Every endpoint is reached through the session's scope, so another organization's is the 404 page;
 * every POST is checked (origin and form token) first; every change is audited in the change's own
 * transaction (`audited`), a revealed secret too.
 */

/** What the webhook routes share with the area's other routes. */
export interface WebhookRouteKit {
  readonly runtime: RequestRuntime;
  readonly settings: { readonly origin: string; readonly webhooks: WebhookEndpointSettings; readonly limits: OrganizationLimits };
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** Adds a signed-in POST route, its form checked first (`formRoutes`). */
  readonly post: FormRoute;
  /** The header's organization name and the session's form token. */
  readonly signedIn: (session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program (see `runProgram`). */
  readonly run: <A, E>(program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** Why an endpoint is disabled when its developer disabled it here. */
export const DISABLED_BY_HAND = "disabled by hand in the Developer area";

/** What a page says after a change it was redirected from (`?done=…`). */
const DONE: Readonly<Record<string, string>> = {
  added: "Endpoint added. Reveal its signing secret below to verify its deliveries, and send it a test event.",
  enabled: "Endpoint enabled: deliveries are sent to it again.",
  disabled: "Endpoint disabled: nothing is sent to it until it is enabled again.",
};

/** The audit log's name of an endpoint. */
const subjectOf = (id: number) => `webhook_endpoint ${id}`;

/** The event types ticked on the add form: each checkbox is a field of its own, `type:<event type>`. */
const pickedTypes = (form: Readonly<Record<string, string>>) =>
  Object.keys(form).filter((name) => name.startsWith("type:")).map((name) => name.slice("type:".length));

/** The SSRF guard's reason (`db.local is not allowed: webhooks are sent only to public internet addresses`) as a sentence beside the field. */
const refusalText = (reason: string) => {
  const unresolved = /^could not resolve (.*)$/.exec(reason);
  if (unresolved !== null) return `No address was found for ${unresolved[1]}: check the URL's host name.`;
  const refused = /^(.*) is not allowed: webhooks are sent only to public internet addresses$/.exec(reason);
  // Never what the host resolves to: that would map internal networks for whoever asks.
  if (refused !== null) return `Webhooks are sent only to public internet addresses, and ${refused[1]} is not allowed.`;
  return `${reason.charAt(0).toUpperCase()}${reason.slice(1)}.`;
};

/** Adds the Webhooks routes to `router`. */
export const addWebhookRoutes = (router: Router, kit: WebhookRouteKit): void => {
  const { run, signedIn, signedInOnly, post, settings } = kit;
  const endpoints = WebhookEndpointRepository;

  /** The audit entry of `action` on endpoint `id`. */
  const entry = (action: string, id: number) => ({ action: `webhook_endpoint.${action}`, subject: subjectOf(id) });

  const showEndpoint = async (ctx: Context, status: number, id: number, state: EndpointPageState = {}) => {
    const session = sessionOf(ctx);
    const endpoint = await run(endpoints.use((all) => all.find(session.scope, id)));
    page(ctx, status, endpointPage(await signedIn(session), endpoint, state));
  };

  router.get("/webhooks", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const all = await run(endpoints.use((repository) => repository.overview(session.scope)));
    page(ctx, 200, webhooksPage(await signedIn(session), all));
  });

  router.get("/webhooks/new", signedInOnly, async (ctx) => {
    page(ctx, 200, newEndpointPage(await signedIn(sessionOf(ctx)), EMPTY_ENDPOINT_FORM));
  });

  post("/webhooks", async (ctx, form, session) => {
    const entered: EndpointForm = { url: form["url"] ?? "", choice: form["choice"] ?? "", picked: pickedTypes(form) };
    const url = parseEndpointUrl(entered.url);
    const types = parseSubscription(entered.choice, entered.picked);
    // The SSRF guard, exactly as `platter webhook add` applies it.
    const refused = Result.isSuccess(url) ? await refusedUrlReason(url.success, settings.webhooks.allowPrivateNetworks, { owner: session.scope.organizationId }) : undefined;
    if (Result.isFailure(url) || refused !== undefined || Result.isFailure(types)) {
      return page(ctx, 400, newEndpointPage(await signedIn(session), {
        ...entered,
        ...(Result.isFailure(url) ? { urlError: url.failure.message } : refused === undefined ? {} : { urlError: refusalText(refused) }),
        ...(Result.isFailure(types) ? { typesError: types.failure.message } : {}),
      }));
    }
    await settings.limits.consume(session.scope.organizationId, "endpointCreates", "/webhooks");
    const created = await run(
      audited(
        session,
        endpoints.use((all) => all.add(session.scope, url.success, types.success, settings.webhooks.endpointsPerOrganization)),
        (endpoint) => entry("added", endpoint.id),
      ).pipe(Effect.catchTag("EndpointLimitReached", (refusal) => Effect.succeed(refusal))),
    );
    // The organization has as many endpoints as it may: said beside the URL, and nothing written.
    if ("_tag" in created) return page(ctx, 400, newEndpointPage(await signedIn(session), { ...entered, urlError: created.message }));
    redirect(ctx, `/webhooks/${created.id}?done=added`);
  });

  router.get("/webhooks/:id", signedInOnly, async (ctx) => {
    const done = DONE[String(ctx.query["done"] ?? "")];
    await showEndpoint(ctx, 200, recordIdOf(ctx), done === undefined ? {} : { notice: done });
  });

  // Revealing is a deliberate POST (never a link a browser may prefetch), and audited; no response is cached.
  post("/webhooks/:id/secret", async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    const secret = await run(audited(session, endpoints.use((all) => all.secret(session.scope, id)), () => entry("secret_revealed", id)));
    await showEndpoint(ctx, 200, id, { secret });
  });

  router.get("/webhooks/:id/rotate", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const endpoint = await run(endpoints.use((all) => all.find(session.scope, recordIdOf(ctx))));
    page(ctx, 200, confirmRotatePage(await signedIn(session), endpoint, settings.webhooks.secretOverlapMs));
  });

  post("/webhooks/:id/rotate", async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    const secret = await run(audited(
      session,
      endpoints.use((all) => Effect.andThen(all.rotateSecret(session.scope, id, settings.webhooks.secretOverlapMs), all.secret(session.scope, id))),
      () => entry("secret_rotated", id),
    ));
    await showEndpoint(ctx, 200, id, { secret, notice: "The signing secret was rotated. Copy the new one into your receiver." });
  });

  for (const enabled of [true, false]) {
    post(`/webhooks/:id/${enabled ? "enable" : "disable"}`, async (ctx, _form, session) => {
      const id = recordIdOf(ctx);
      // Enabling an enabled endpoint (or disabling a disabled one) changes nothing worth recording.
      await run(audited(
        session,
        endpoints.use((all) => all.setEnabled(session.scope, id, enabled, DISABLED_BY_HAND)),
        ({ changed }) => (changed ? entry(enabled ? "enabled" : "disabled", id) : undefined),
      ));
      redirect(ctx, `/webhooks/${id}?done=${enabled ? "enabled" : "disabled"}`);
    });
  }

  post("/webhooks/:id/test", async (ctx, form, session) => {
    const id = recordIdOf(ctx);
    const type = form["type"] ?? "";
    if (!isWebhookEventType(type)) {
      return showEndpoint(ctx, 400, id, { testForm: { type, error: "Choose an event type of the catalog." } });
    }
    await settings.limits.consume(session.scope.organizationId, "testEvents", `/webhooks/${id}`);
    const sent = await run(
      audited(session, endpoints.use((all) => all.sendTestMessage(session.scope, id, exampleMessage(type))), () => entry("test_sent", id)).pipe(
        Effect.catchTag("InvalidTransition", (refusal) => Effect.succeed(refusal)),
      ),
    );
    if ("_tag" in sent) return showEndpoint(ctx, 409, id, { testForm: { type, error: sent.message } });
    redirect(ctx, `/webhooks/${id}/test/${sent.delivery_id}`);
  });

  router.get("/webhooks/:id/test/:delivery", signedInOnly, async (ctx) => {
    const id = recordIdOf(ctx);
    const deliveryId = recordIdOf(ctx, "delivery");
    const session = sessionOf(ctx);
    const [endpoint, delivery] = await run(
      Effect.all([
        endpoints.use((all) => all.find(session.scope, id)),
        endpoints.use((all) => all.delivery(session.scope, id, deliveryId)),
      ]),
    );
    page(ctx, 200, testDeliveryPage(await signedIn(session), endpoint, delivery));
  });
};
