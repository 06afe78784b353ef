import {
  type AttemptOutcome, type AttemptRecord, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, type HeldSlots, organizationShare, originShare,
} from "@platter/domain";
import { Effect } from "effect";
import { type AttemptSettings, attemptDelivery, createDeliveryAgent } from "./delivery-attempt.ts";
import type { OutboxChannel } from "./outbox-runner.ts";
import { DEFAULT_DNS_SETTINGS, type DnsSettings, WebhookResolver } from "./webhook-resolver.ts";

/**
 * The operator's operational webhooks (endpoint notices POSTed to the operator's own URL) as a
 * channel of the dispatcher's `OutboxRunner`: claimed from the notice queue under the one lease
 * (organizations taking turns, none past its share of the channel's slots), sent by the same signed
 * POST as a delivery, and recorded as the domain's `DELIVERY_DECISION` moves a delivery (retried on
 * the retry schedule, with the same id and bytes), so they never take a business slot.
 */

/** The channel's settings: the attempt's (timeout, signature header), the retry policy, and its own slots. */
export interface OperatorWebhookSettings extends Omit<AttemptSettings, "allowPrivateNetworks" | "originConnections">, DeliveryPolicy {
  /** Notices sent at once (`OPERATOR_WEBHOOK_CONCURRENCY`): a turn claims at most this many. */
  readonly concurrency: number;
  /** How long a claimed notice is held; longer than the timeout. */
  readonly leaseMs: number;
  /** How the operator's host name is resolved (default `DEFAULT_DNS_SETTINGS`, within the timeout). */
  readonly dns?: DnsSettings;
}

/** What the channel tells its process: each attempt, as the business loop's observer hears them. */
export interface OperatorWebhookObserver {
  readonly attempted?: (outcome: AttemptOutcome, durationMs: number, notice: DueDelivery, statusCode?: number) => void;
}

/**
 * The operator channel on `storage` (the notice queue: `DeliveryQueue.operatorNotices`). The
 * operator's own URL may well be an internal alerting service, so the SSRF guard (which is for
 * organizations' URLs) does not apply to it.
 */
export const operatorWebhookChannel = (
  storage: DeliveryStorage, settings: OperatorWebhookSettings, observer: OperatorWebhookObserver = {},
): OutboxChannel<DueDelivery, AttemptRecord> => {
  const attemptSettings: AttemptSettings = {
    signatureHeader: settings.signatureHeader, timeoutMs: settings.timeoutMs, allowPrivateNetworks: true, originConnections: settings.concurrency,
  };
  const resolver = new WebhookResolver(settings.dns ?? { ...DEFAULT_DNS_SETTINGS, timeoutMs: Math.min(DEFAULT_DNS_SETTINGS.timeoutMs, settings.timeoutMs) });
  const agent = createDeliveryAgent(attemptSettings, resolver);
  const policy: DeliveryPolicy = {
    circuitThreshold: settings.circuitThreshold, circuitCooldownMs: settings.circuitCooldownMs, retryScheduleMs: settings.retryScheduleMs,
    failureWindowMs: settings.failureWindowMs, disableNoticeMs: settings.disableNoticeMs, notifyOperator: settings.notifyOperator,
  };
  // A turn records all it claimed before the next claim: nothing is in flight when it claims, and no
  // organization takes more than its share of the turn (all the slots but a reserve, as a dispatcher's).
  const nothingHeld: HeldSlots = {
    share: settings.concurrency, inFlight: new Map(),
    organizationShare: organizationShare({ concurrency: settings.concurrency, endpointConcurrency: settings.concurrency }, 1),
    inFlightByOrganization: new Map(), originConnections: settings.concurrency, inFlightByOrigin: new Map(), originShare: originShare(settings.concurrency),
  };
  return {
    claim: async () => (await Effect.runPromise(storage.claimDue(settings.concurrency, settings.leaseMs, policy, nothingHeld))).due,
    send: (notices) => Promise.all(notices.map(async (notice): Promise<AttemptRecord> => {
      const result = await attemptDelivery(agent, notice, attemptSettings, resolver);
      observer.attempted?.(result.outcome, result.durationMs, notice, result.statusCode);
      return { delivery: notice, ...result };
    })),
    record: (records) => Effect.runPromise(storage.recordAttempts(records, policy)),
    nextDueInMs: () => Effect.runPromise(storage.nextDueInMs(policy)),
    close: () => agent.close(),
  };
};
