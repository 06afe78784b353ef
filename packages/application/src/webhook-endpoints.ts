import {
  type Actor, type EndpointEdit, endpointEditDetails, endpointLimitReached, type EndpointSettings, EndpointUrlRefused, endpointUrlTaken,
  exampleMessage, generateSigningSecret, InvalidTransition, normalizedEndpointUrl, parseEndpointDescription, parseEndpointUrl, type WebhookEventType,
} from "@platter/domain";
import type { WebhookEndpointSettings } from "@platter/ops";
import { inOneTransaction, WebhookEndpointRepository } from "@platter/persistence";
import { type UrlRefusal, urlRefusal } from "@platter/webhooks";
import { Effect } from "effect";
import { audited } from "./audited.ts";

/**
 * An organization's webhook endpoints, as an actor sees and changes them: registration through the
 * SSRF guard (its DNS look-ups on the organization's share), the signing secret (shown only when
 * asked, and audited then), enabling and disabling, deleting, and test events.
 */

/** The audit log's name of an endpoint. */
const subjectOf = (id: number) => `webhook_endpoint ${id}`;

/** The audit entry of `action` on endpoint `id`. */
const entry = (action: string, id: number) => ({ action: `webhook_endpoint.${action}`, subject: subjectOf(id) });

/** The guard's refusal as a sentence to show beside the URL: the host given, never what it resolves to. */
const refusalMessage = (refusal: UrlRefusal): string => {
  switch (refusal.reason) {
    case "invalid":
      return `${refusal.message.charAt(0).toUpperCase()}${refusal.message.slice(1)}.`;
    case "forbidden":
      return `Webhooks are sent only to public internet addresses, and ${refusal.host} is not allowed.`;
    case "no-public-address":
      // One sentence whether the name resolves to internal addresses or to nothing: never which.
      return `Webhooks are sent only to public internet addresses, and ${refusal.host} has none: check the URL's host name.`;
  }
};

/** `url` checked (`parseEndpointUrl`, then the SSRF guard on the organization's DNS share), ready to store. */
const checkedUrl = (actor: Actor, raw: string, settings: Pick<WebhookEndpointSettings, "allowPrivateNetworks">) =>
  Effect.gen(function* () {
    const url = yield* Effect.fromResult(parseEndpointUrl(raw));
    const refusal = yield* Effect.promise(() => urlRefusal(url, settings.allowPrivateNetworks, { owner: actor.scope.organizationId }));
    if (refusal !== undefined) return yield* new EndpointUrlRefused({ message: refusalMessage(refusal) });
    return url;
  });

/**
 * The one-URL check over `lockForRegistration`'s rows: `EndpointUrlTaken` when an endpoint other than
 * `leftOut` (the one being edited) already has `url`, however written (`normalizedEndpointUrl`).
 */
const refuseTakenUrl = (registered: ReadonlyArray<{ readonly id: number; readonly url: string }>, url: string, leftOut?: number) => {
  const normalized = normalizedEndpointUrl(url);
  const taken = registered.find((endpoint) => endpoint.id !== leftOut && normalizedEndpointUrl(endpoint.url) === normalized);
  return taken === undefined ? Effect.void : Effect.fail(endpointUrlTaken(url, taken.id));
};

/**
 * Registers a checked `url` under the organization's limit, one endpoint per URL: the count, the
 * URL check and the insert in one transaction, under the organization's row lock
 * (`lockForRegistration`), so concurrent registrations cannot pass the limit. `EndpointLimitReached`
 * when it already has `limit` endpoints (disabled ones count, deleted ones and local listeners do not);
 * `EndpointUrlTaken` when one already has this URL, however written (`normalizedEndpointUrl`:
 * duplicates registered before this rule stay as they are). The new signing secret is returned once.
 */
const registerChecked = (actor: Actor, url: string, types: ReadonlyArray<WebhookEventType>, limit: number) =>
  inOneTransaction(Effect.gen(function* () {
    const endpoints = yield* WebhookEndpointRepository;
    const registered = yield* endpoints.lockForRegistration(actor.scope);
    if (registered.length >= limit) return yield* endpointLimitReached(limit);
    yield* refuseTakenUrl(registered, url);
    return yield* endpoints.add(actor.scope, url, types, generateSigningSecret());
  }));

/** An edit as checked before its transaction: a URL the guard allowed, a description read (null: none), types known. */
interface CheckedEdit {
  readonly url?: string;
  readonly eventTypes?: ReadonlyArray<WebhookEventType>;
  readonly description?: string | null;
  readonly enabled?: boolean;
}

/**
 * Applies a checked edit to endpoint `id` in one transaction: the endpoint's row locked (and, for a
 * new URL, the organization's, as registrations lock it: one endpoint per URL still holds); a local
 * listener's endpoint is `platter listen`'s (`InvalidTransition`); a URL another endpoint has is
 * `EndpointUrlTaken`. Returns the settings before and after, and the audit details (undefined when
 * nothing changed, and then nothing was written).
 */
const editChecked = (actor: Actor, id: number, edit: CheckedEdit, disabledReason: string | undefined) =>
  inOneTransaction(Effect.gen(function* () {
    const endpoints = yield* WebhookEndpointRepository;
    const registered = edit.url === undefined ? [] : yield* endpoints.lockForRegistration(actor.scope);
    const locked = yield* endpoints.lockForEdit(actor.scope, id);
    if (locked.listener) {
      return yield* new InvalidTransition({ message: "This endpoint is a local listener: platter listen sets its URL and event types." });
    }
    if (edit.url !== undefined) yield* refuseTakenUrl(registered, edit.url, id);
    const before: EndpointSettings = { url: locked.url, event_types: locked.event_types, description: locked.description, enabled: locked.enabled };
    const after: EndpointSettings = {
      url: edit.url ?? before.url,
      event_types: edit.eventTypes ?? before.event_types,
      description: edit.description === undefined ? before.description : edit.description,
      enabled: edit.enabled ?? before.enabled,
    };
    const details = endpointEditDetails(before, after);
    const changed = details === undefined ? [] : Object.keys(details.after);
    if (changed.some((key) => key !== "enabled")) {
      yield* endpoints.edit(actor.scope, id, { url: after.url, eventTypes: after.event_types as ReadonlyArray<WebhookEventType>, description: after.description });
    }
    // Enabling or disabling as `setEnabled` does it (a fresh start; disabling ends the pending deliveries).
    if (changed.includes("enabled")) yield* endpoints.setEnabled(actor.scope, id, after.enabled, disabledReason);
    return { id, before, after, details };
  }));

export const WebhookEndpoints = {
  /** The organization's endpoints, oldest first. */
  list: (actor: Actor) => WebhookEndpointRepository.use((endpoints) => endpoints.list(actor.scope)),
  /** Every endpoint with its health over the last 24 hours and its open circuit. */
  overview: (actor: Actor) => WebhookEndpointRepository.use((endpoints) => endpoints.overview(actor.scope)),
  /** Each endpoint's active operational notice (failing, about to be disabled, disabled), for the Webhooks pages' banners. */
  activeNotices: (actor: Actor) => WebhookEndpointRepository.use((endpoints) => endpoints.activeNotices(actor.scope)),
  /** One endpoint as `overview` shows it; `NotFound` for another organization's. */
  find: (actor: Actor, id: number) => WebhookEndpointRepository.use((endpoints) => endpoints.find(actor.scope, id)),
  /** A delivery to endpoint `endpointId` with its attempts (a test event's, as its page follows it). */
  delivery: (actor: Actor, endpointId: number, deliveryId: number) =>
    WebhookEndpointRepository.use((endpoints) => endpoints.delivery(actor.scope, endpointId, deliveryId)),

  /**
   * Registers `url` for `types` (none: every type): `InvalidInput` for a URL that is not one,
   * `EndpointUrlRefused` for one the SSRF guard refuses, `EndpointLimitReached` beyond the
   * organization's limit, `EndpointUrlTaken` for a URL it already has; nothing is written then.
   * The signing secret is returned this once. Audited `webhook_endpoint.added`.
   */
  register: (actor: Actor, url: string, types: ReadonlyArray<WebhookEventType>, settings: WebhookEndpointSettings) =>
    checkedUrl(actor, url, settings).pipe(
      Effect.flatMap((checked) =>
        audited(actor, registerChecked(actor, checked, types, settings.endpointsPerOrganization), (created) => entry("added", created.id))),
    ),

  /**
   * Edits endpoint `id`: its URL (through the SSRF guard as at registration, checked only when it
   * differs from the current one; its origin follows, and deliveries not yet sent go to it), event
   * types, description (see `parseEndpointDescription`; empty removes it) and enabled state
   * (`reason` says why when it disables). Fields left out stay as they are. `InvalidInput` for a URL
   * or description that is not one, `EndpointUrlRefused`, `EndpointUrlTaken`, `InvalidTransition` for
   * a local listener, `NotFound` for another organization's: nothing is written then. Audited
   * `webhook_endpoint.updated` with what changed before and after, when something did.
   */
  edit: (actor: Actor, id: number, edit: EndpointEdit, settings: Pick<WebhookEndpointSettings, "allowPrivateNetworks">, reason?: string) =>
    Effect.gen(function* () {
      const description = edit.description === undefined ? undefined : yield* Effect.fromResult(parseEndpointDescription(edit.description));
      // The guard's DNS look-ups stay outside the transaction; an unchanged URL is not looked up again.
      const current = edit.url === undefined ? undefined : yield* WebhookEndpointRepository.use((endpoints) => endpoints.find(actor.scope, id));
      const url = edit.url === undefined || edit.url.trim() === current?.url ? undefined : yield* checkedUrl(actor, edit.url, settings);
      const checked: CheckedEdit = {
        ...(url === undefined ? {} : { url }),
        ...(edit.eventTypes === undefined ? {} : { eventTypes: edit.eventTypes }),
        ...(description === undefined ? {} : { description }),
        ...(edit.enabled === undefined ? {} : { enabled: edit.enabled }),
      };
      return yield* audited(actor, editChecked(actor, id, checked, reason), (edited) =>
        edited.details === undefined ? undefined : { ...entry("updated", id), details: edited.details });
    }),

  /** The signing secret (and until when the one before still signs); audited `webhook_endpoint.secret_revealed`. */
  revealSecret: (actor: Actor, id: number) =>
    audited(actor, WebhookEndpointRepository.use((endpoints) => endpoints.secret(actor.scope, id)), () => entry("secret_revealed", id)),

  /**
   * A new signing secret, returned this once; the old one keeps signing beside it for
   * `settings.secretOverlapMs`. Audited `webhook_endpoint.secret_rotated`.
   */
  rotateSecret: (actor: Actor, id: number, settings: Pick<WebhookEndpointSettings, "secretOverlapMs">) =>
    audited(
      actor,
      WebhookEndpointRepository.use((endpoints) => endpoints.rotateSecret(actor.scope, id, settings.secretOverlapMs, generateSigningSecret())),
      () => entry("secret_rotated", id),
    ),

  /**
   * Enables or disables an endpoint (`reason` says why it was disabled), audited
   * `webhook_endpoint.enabled` or `.disabled` when that changed something.
   */
  setEnabled: (actor: Actor, id: number, enabled: boolean, reason?: string) =>
    audited(
      actor,
      WebhookEndpointRepository.use((endpoints) => endpoints.setEnabled(actor.scope, id, enabled, reason)),
      ({ changed }) => (changed ? entry(enabled ? "enabled" : "disabled", id) : undefined),
    ),

  /**
   * Sets the endpoint's throttle: at most `perSecond` deliveries a second across every dispatcher
   * (the domain's `parseEndpointThrottle` reads it), or none (null). Audited
   * `webhook_endpoint.throttled` (set or changed) or `.unthrottled` when that changed something,
   * with the throttle before and after.
   */
  setThrottle: (actor: Actor, id: number, perSecond: number | null) =>
    audited(
      actor,
      WebhookEndpointRepository.use((endpoints) => endpoints.setThrottle(actor.scope, id, perSecond)),
      ({ before, after, changed }) => (changed
        ? { ...entry(after === null ? "unthrottled" : "throttled", id), details: { before: { throttle_per_second: before }, after: { throttle_per_second: after } } }
        : undefined),
    ),

  /**
   * Deletes endpoint `id`: it gets no new deliveries, its pending ones end ("endpoint deleted" in
   * the log), its signing secrets are destroyed and its slot under the organization's limit is
   * free; its history stays readable until retention. `NotFound` for one already deleted,
   * `InvalidTransition` for a local listener; nothing is written then. Audited `webhook_endpoint.deleted`.
   */
  delete: (actor: Actor, id: number) =>
    audited(actor, WebhookEndpointRepository.use((endpoints) => endpoints.delete(actor.scope, id)), () => entry("deleted", id)),

  /**
   * A test message of `type` (the catalog's example) to this endpoint only; `InvalidTransition` for
   * a disabled endpoint. Audited `webhook_endpoint.test_sent`.
   */
  sendTestMessage: (actor: Actor, id: number, type: WebhookEventType) =>
    audited(
      actor,
      WebhookEndpointRepository.use((endpoints) => endpoints.sendTestMessage(actor.scope, id, exampleMessage(type))),
      () => entry("test_sent", id),
    ),
};
