import {
  type Actor, endpointLimitReached, EndpointUrlRefused, endpointUrlTaken, exampleMessage, generateSigningSecret, normalizedEndpointUrl,
  parseEndpointUrl, type WebhookEventType,
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
    const normalized = normalizedEndpointUrl(url);
    const taken = registered.find((endpoint) => normalizedEndpointUrl(endpoint.url) === normalized);
    if (taken !== undefined) return yield* endpointUrlTaken(url, taken.id);
    return yield* endpoints.add(actor.scope, url, types, generateSigningSecret());
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
