import {
  type ApiKeyActor, apiKeyActor, Forbidden, LISTENER_DELIVERY_LEASE_MS, LISTENER_LEASE_MS, type ListenerReport, type ListenRequest,
  type WebhookEventType,
} from "@platter/domain";
import { ApiKeyRepository, LocalListeners, type OpenedListener } from "@platter/persistence";
import { Effect } from "effect";
import { audited } from "./audited.ts";
import { Sandbox } from "./sandbox.ts";

/**
 * Local forwarding, as an integrator's CLI uses it with an API key (`platter listen`, `platter
 * trigger`): the key authenticated into an actor, its listener opened, kept, fed and closed for a
 * stream, each forward's answer recorded as the attempt; and, in a sandbox, an event made to
 * happen. No operator access is involved: everything is the key's, in the key's organization.
 */
/** Nothing for a read/write key; `Forbidden` for a read-only one (listening, triggering, the message feed). */
export const readWriteOnly = (actor: ApiKeyActor) => (actor.scope.access === "read_write" ? Effect.void : Effect.fail(new Forbidden()));

export const LocalForwarding = {
  /** The key `secret` as the actor of what follows (`Unauthenticated` for an unknown, revoked or expired key). */
  authenticate: (secret: string) => Effect.map(ApiKeyRepository.use((keys) => keys.authenticate(secret)), (key) => apiKeyActor(key.scope)),
  /**
   * The key's listener opened for a stream (`LocalListeners.open`), at most `limit` connected per
   * organization; its first opening is audited `webhook_listener.created`. A read-only key is
   * `Forbidden`: a listener is an endpoint the key adds, and its payloads carry what the read API
   * does not show (as `stripe listen` needs a secret key).
   */
  open: (actor: ApiKeyActor, request: ListenRequest, limit: number) =>
    Effect.andThen(
      readWriteOnly(actor),
      audited(actor, LocalListeners.use((listeners) => listeners.open(actor.scope, request, LISTENER_LEASE_MS, limit)), (opened) =>
        opened.created ? { action: "webhook_listener.created", subject: `webhook_endpoint ${opened.id}` } : undefined),
    ),
  /** Keeps the stream's listener getting deliveries; false once another stream took it over. */
  renew: (actor: ApiKeyActor, listener: OpenedListener) => LocalListeners.use((listeners) => listeners.renew(actor.scope, listener, LISTENER_LEASE_MS)),
  /** The stream ended. */
  close: (actor: ApiKeyActor, listener: OpenedListener) => LocalListeners.use((listeners) => listeners.close(actor.scope, listener)),
  /** The listener's due deliveries, leased to the stream. */
  claim: (actor: ApiKeyActor, listener: OpenedListener) =>
    LocalListeners.use((listeners) => listeners.claim(actor.scope, listener, LISTENER_DELIVERY_LEASE_MS)),
  /** A forward's answer, recorded as its delivery's attempt. */
  record: (actor: ApiKeyActor, report: ListenerReport) => LocalListeners.use((listeners) => listeners.record(actor.scope, report)),
  /** Makes `type` happen in the key's sandbox (`Sandbox.trigger`, audited as the key); a read-only key is `Forbidden`. */
  trigger: (actor: ApiKeyActor, type: WebhookEventType) => Effect.andThen(readWriteOnly(actor), Sandbox.trigger(actor, type)),
};
