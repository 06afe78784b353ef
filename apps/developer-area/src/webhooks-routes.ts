import type Router from "@koa/router";
import { WebhookEndpoints } from "@platter/application";
import { isWebhookEventType, parseEndpointDescription, parseEndpointThrottle, parseEndpointUrl, parseSubscription } from "@platter/domain";
import type { WebhookEndpointSettings } from "@platter/ops";
import type { DeveloperSession, RequestStorage } from "@platter/persistence";
import { Effect, Result } from "effect";
import type { Context, Middleware } from "koa";
import { shownOnForm } from "./error-pages.ts";
import type { SignedIn } from "./layout.ts";
import { limited, refusalCostWork } from "./organization-limits.ts";
import { page, recordIdOf, redirect } from "./page-responses.ts";
import { type FormRoute, sessionOf } from "./session.ts";
import {
  confirmDeletePage, confirmRotatePage, EMPTY_ENDPOINT_FORM, type EditEndpointForm, editEndpointPage, editFormOf, type EndpointForm, endpointPage,
  type EndpointPageState, newEndpointPage,
  testDeliveryPage, webhooksPage,
} from "./webhooks-pages.ts";

/**
 * The Webhooks routes: list, add, edit, reveal and rotate the signing secret, enable/disable, delete (after a confirmation page), send a test
 * event and follow its delivery. Each calls the application's `WebhookEndpoints` as the session: the
 * session's scope (another organization's endpoint is the 404 page), the SSRF guard, the change and
 * its audit row are the service's; every POST is checked (origin and form token) first.
 */

/** What the webhook routes share with the area's other routes. */
export interface WebhookRouteKit {
  /** The endpoints' settings (`WEBHOOK_*`): the SSRF guard's and a rotated secret's overlap. */
  readonly settings: { readonly webhooks: WebhookEndpointSettings };
  /** Requires a live session (otherwise the sign-in page). */
  readonly signedInOnly: Middleware;
  /** Adds a signed-in POST route, its form checked first (`formRoutes`). */
  readonly post: FormRoute;
  /** The header's organization name and the session's form token. */
  readonly signedIn: (ctx: Context, session: DeveloperSession) => Promise<SignedIn>;
  /** Runs one storage program of the request `ctx` (see `runProgram`; a GET's reads may go to a replica). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
}

/** Why an endpoint is disabled when its developer disabled it here. */
export const DISABLED_BY_HAND = "disabled by hand in the Developer area";

/** What a page says after a change it was redirected from (`?done=…`). */
const DONE: Readonly<Record<string, string>> = {
  added: "Endpoint added. Reveal its signing secret below to verify its deliveries, and send it a test event.",
  enabled: "Endpoint enabled: deliveries are sent to it again.",
  disabled: "Endpoint disabled: nothing is sent to it until it is enabled again.",
  throttled: "Throttle saved: it applies to the next deliveries sent.",
  edited: "Endpoint saved. Deliveries not yet sent go to it as it is now.",
};

/** What the Webhooks page says after a deletion (`?done=deleted`). */
const DELETED = "Endpoint deleted: nothing more is sent to it, and its deliveries stay in the delivery log until retention removes them.";

/** The event types ticked on the add form: each checkbox is a field of its own, `type:<event type>`. */
const pickedTypes = (form: Readonly<Record<string, string>>) =>
  Object.keys(form).filter((name) => name.startsWith("type:")).map((name) => name.slice("type:".length));

/** The endpoint's page, where a refused change's "too many" page leads back to. */
const endpointPath = (ctx: Context) => `/webhooks/${recordIdOf(ctx)}`;

/** Adds the Webhooks routes to `router`. */
export const addWebhookRoutes = (router: Router, kit: WebhookRouteKit): void => {
  const { run, signedIn, signedInOnly, post, settings } = kit;

  const showEndpoint = async (ctx: Context, status: number, id: number, state: EndpointPageState = {}) => {
    const session = sessionOf(ctx);
    const [endpoint, operationalNotices] = await run(ctx, Effect.all([WebhookEndpoints.find(session, id), WebhookEndpoints.activeNotices(session)]));
    page(ctx, status, endpointPage(await signedIn(ctx, session), endpoint, { ...state, operationalNotices }));
  };

  router.get("/webhooks", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const [endpoints, notices] = await run(ctx, Effect.all([WebhookEndpoints.overview(session), WebhookEndpoints.activeNotices(session)]));
    page(ctx, 200, webhooksPage(await signedIn(ctx, session), endpoints, notices, ctx.query["done"] === "deleted" ? DELETED : undefined));
  });

  router.get("/webhooks/new", signedInOnly, async (ctx) => {
    page(ctx, 200, newEndpointPage(await signedIn(ctx, sessionOf(ctx)), EMPTY_ENDPOINT_FORM));
  });

  post("/webhooks", limited("endpointCreates", "/webhooks"), async (ctx, form, session) => {
    const entered: EndpointForm = { url: form["url"] ?? "", choice: form["choice"] ?? "", picked: pickedTypes(form) };
    const types = parseSubscription(entered.choice, entered.picked);
    if (Result.isFailure(types)) {
      // Both fields' problems at once: the URL's form too (the service checks it again, and guards it).
      const url = parseEndpointUrl(entered.url);
      return page(ctx, 400, newEndpointPage(await signedIn(ctx, session), {
        ...entered, typesError: types.failure.message, ...(Result.isFailure(url) ? { urlError: url.failure.message } : {}),
      }));
    }
    // A URL that is not one or may not receive webhooks, or one endpoint too many: said beside the URL, and nothing written.
    const created = await run(ctx, shownOnForm(
      WebhookEndpoints.register(session, entered.url, types.success, settings.webhooks),
      "InvalidInput", "EndpointUrlRefused", "EndpointLimitReached", "EndpointUrlTaken",
    ));
    if (!created.done) {
      // The SSRF guard may have looked the name up: that refusal keeps its count, so lookups stay bounded.
      if (created.tag === "EndpointUrlRefused") refusalCostWork(ctx);
      return page(ctx, 400, newEndpointPage(await signedIn(ctx, session), { ...entered, urlError: created.refusal.text }));
    }
    redirect(ctx, `/webhooks/${created.value.id}?done=added`);
  });

  router.get("/webhooks/:id", signedInOnly, async (ctx) => {
    const done = DONE[String(ctx.query["done"] ?? "")];
    await showEndpoint(ctx, 200, recordIdOf(ctx), done === undefined ? {} : { notice: done });
  });

  router.get("/webhooks/:id/edit", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const endpoint = await run(ctx, WebhookEndpoints.find(session, recordIdOf(ctx)));
    page(ctx, 200, editEndpointPage(await signedIn(ctx, session), endpoint, editFormOf(endpoint)));
  });

  post("/webhooks/:id/edit", limited("endpointChanges", endpointPath), async (ctx, form, session) => {
    const id = recordIdOf(ctx);
    const entered: EditEndpointForm = {
      url: form["url"] ?? "", choice: form["choice"] ?? "", picked: pickedTypes(form), description: form["description"] ?? "",
    };
    const refused = async (status: number, problems: Partial<EditEndpointForm>) =>
      page(ctx, status, editEndpointPage(await signedIn(ctx, session), await run(ctx, WebhookEndpoints.find(session, id)), { ...entered, ...problems }));
    // Every field's problem at once, before anything is looked up: the URL's form, the description's length, the types.
    const types = parseSubscription(entered.choice, entered.picked);
    const description = parseEndpointDescription(entered.description);
    const url = parseEndpointUrl(entered.url);
    if (Result.isFailure(types) || Result.isFailure(description) || Result.isFailure(url)) {
      return refused(400, {
        ...(Result.isFailure(types) ? { typesError: types.failure.message } : {}),
        ...(Result.isFailure(description) ? { descriptionError: description.failure.message } : {}),
        ...(Result.isFailure(url) ? { urlError: url.failure.message } : {}),
      });
    }
    // A URL that may not receive webhooks or is another endpoint's, or a local listener's endpoint: said beside the URL, and nothing written.
    const edited = await run(ctx, shownOnForm(
      WebhookEndpoints.edit(session, id, { url: entered.url, eventTypes: types.success, description: entered.description }, settings.webhooks),
      "InvalidInput", "EndpointUrlRefused", "EndpointUrlTaken", "InvalidTransition",
    ));
    if (!edited.done) {
      // The SSRF guard may have looked the name up: that refusal keeps its count, so lookups stay bounded.
      if (edited.tag === "EndpointUrlRefused") refusalCostWork(ctx);
      return refused(edited.refusal.status, { urlError: edited.refusal.text });
    }
    redirect(ctx, `/webhooks/${id}?done=edited`);
  });

  // Revealing is a deliberate POST (never a link a browser may prefetch), and audited; no response is cached.
  post("/webhooks/:id/secret", limited("endpointChanges", endpointPath), async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    await showEndpoint(ctx, 200, id, { secret: await run(ctx, WebhookEndpoints.revealSecret(session, id)) });
  });

  router.get("/webhooks/:id/rotate", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const endpoint = await run(ctx, WebhookEndpoints.find(session, recordIdOf(ctx)));
    page(ctx, 200, confirmRotatePage(await signedIn(ctx, session), endpoint, settings.webhooks.secretOverlapMs));
  });

  post("/webhooks/:id/rotate", limited("endpointChanges", endpointPath), async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    const secret = await run(ctx, WebhookEndpoints.rotateSecret(session, id, settings.webhooks));
    await showEndpoint(ctx, 200, id, { secret, notice: "The signing secret was rotated. Copy the new one into your receiver." });
  });

  for (const enabled of [true, false]) {
    post(`/webhooks/:id/${enabled ? "enable" : "disable"}`, limited("endpointChanges", endpointPath), async (ctx, _form, session) => {
      const id = recordIdOf(ctx);
      await run(ctx, WebhookEndpoints.setEnabled(session, id, enabled, DISABLED_BY_HAND));
      redirect(ctx, `/webhooks/${id}?done=${enabled ? "enabled" : "disabled"}`);
    });
  }

  // The throttle's own small form: a refused value is said beside its field, and nothing is written.
  post("/webhooks/:id/throttle", limited("endpointChanges", endpointPath), async (ctx, form, session) => {
    const id = recordIdOf(ctx);
    const entered = form["per_second"] ?? "";
    const perSecond = parseEndpointThrottle(entered);
    if (Result.isFailure(perSecond)) return showEndpoint(ctx, 400, id, { throttleForm: { perSecond: entered, error: perSecond.failure.message } });
    await run(ctx, WebhookEndpoints.setThrottle(session, id, perSecond.success));
    redirect(ctx, `/webhooks/${id}?done=throttled`);
  });

  router.get("/webhooks/:id/delete", signedInOnly, async (ctx) => {
    const session = sessionOf(ctx);
    const endpoint = await run(ctx, WebhookEndpoints.find(session, recordIdOf(ctx)));
    page(ctx, 200, confirmDeletePage(await signedIn(ctx, session), endpoint));
  });

  // Deleted, or already gone (another tab deleted it): the 404 page; a local listener's refusal is said on the confirmation page.
  post("/webhooks/:id/delete", limited("endpointChanges", endpointPath), async (ctx, _form, session) => {
    const id = recordIdOf(ctx);
    const deleted = await run(ctx, shownOnForm(WebhookEndpoints.delete(session, id), "InvalidTransition"));
    if (!deleted.done) {
      const endpoint = await run(ctx, WebhookEndpoints.find(session, id));
      return page(ctx, deleted.refusal.status, confirmDeletePage(await signedIn(ctx, session), endpoint, deleted.refusal.text));
    }
    redirect(ctx, "/webhooks?done=deleted");
  });

  post("/webhooks/:id/test", limited("testEvents", endpointPath), async (ctx, form, session) => {
    const id = recordIdOf(ctx);
    const type = form["type"] ?? "";
    if (!isWebhookEventType(type)) {
      return showEndpoint(ctx, 400, id, { testForm: { type, error: "Choose an event type of the catalog." } });
    }
    const sent = await run(ctx, shownOnForm(WebhookEndpoints.sendTestMessage(session, id, type), "InvalidTransition"));
    if (!sent.done) return showEndpoint(ctx, sent.refusal.status, id, { testForm: { type, error: sent.refusal.text } });
    redirect(ctx, `/webhooks/${id}/test/${sent.value.delivery_id}`);
  });

  router.get("/webhooks/:id/test/:delivery", signedInOnly, async (ctx) => {
    const id = recordIdOf(ctx);
    const deliveryId = recordIdOf(ctx, "delivery");
    const session = sessionOf(ctx);
    const [endpoint, delivery] = await run(ctx, Effect.all([WebhookEndpoints.find(session, id), WebhookEndpoints.delivery(session, id, deliveryId)]));
    page(ctx, 200, testDeliveryPage(await signedIn(ctx, session), endpoint, delivery));
  });
};
