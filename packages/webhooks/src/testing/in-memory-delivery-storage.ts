import {
  type AttemptOutcome, type AttemptRecord, type DeliveryAfterAttempt, deliveryDecided, type DeliveryPolicy, type DeliveryStorage, deliveryToEndpoint,
  type DueDelivery, type EndpointHealth, endpointAfterAttempts, firstAttemptDelayMs, type HeldSlots,
} from "@platter/domain";
import { Effect } from "effect";

/**
 * The delivery queue in memory, for the dispatcher loop's unit tests: due times, leases and
 * circuits on the `now` it is given (a `TestClock`'s, standing in for the database's). What follows
 * an attempt is the domain's decision, the one the record statement is generated from, called and
 * applied as it says with no rule of its own: `endpointAfterAttempts` per endpoint, then
 * `deliveryDecided` per delivery (by its lease holder only), and `deliveryToEndpoint` for the other
 * pending deliveries of an endpoint the batch disabled. Claims keep to an endpoint's share and its
 * circuit (half-open: one at a time), oldest due first. Left out, as the real claim's alone (no
 * domain rule to reuse; tested against the real queue): fairness between organizations and between
 * an organization's endpoints (turns, `HeldSlots.organizationShare`) and the per-origin caps.
 */

/** One delivery as the queue keeps it. */
export interface StoredDelivery {
  readonly id: number;
  readonly endpointId: number;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  nextAttemptAtMs: number;
  completedAtMs: number | undefined;
  /** Why it ended without its attempts deciding it (`SETTLED_ENDPOINT_DISABLED`), if so. */
  settledReason: string | undefined;
  leaseToken: string | undefined;
  leaseExpiresAtMs: number | undefined;
}

/** One recorded attempt: which try of which delivery, when it was recorded, and its outcome. */
export interface StoredAttempt {
  readonly deliveryId: number;
  readonly attempt: number;
  readonly recordedAtMs: number;
  readonly outcome: AttemptOutcome;
  /** Whether it still held the delivery's lease (a late result is logged but moves nothing). */
  readonly heldLease: boolean;
}

interface StoredEndpoint {
  readonly id: number;
  readonly organizationId: number;
  readonly url: string;
  health: EndpointHealth;
}

export class InMemoryDeliveryStorage implements DeliveryStorage {
  readonly deliveries: StoredDelivery[] = [];
  readonly attempts: StoredAttempt[] = [];
  /** Claims made (each a statement for the real queue). */
  claims = 0;
  private readonly endpoints = new Map<number, StoredEndpoint>();
  private readonly now: () => number;
  private leases = 0;

  constructor(now: () => number) {
    this.now = now;
  }

  /** An enabled, healthy endpoint of organization `organizationId` at `url`. */
  addEndpoint(id: number, organizationId: number, url: string): void {
    const health = { consecutiveFailures: 0, failingSinceMs: undefined, circuitOpenUntilMs: undefined, enabled: true, disabledReason: null, noticed: null } as const;
    this.endpoints.set(id, { id, organizationId, url, health });
  }

  /** A new delivery to endpoint `endpointId`, due now (its first try waits the schedule's first delay). */
  addDelivery(endpointId: number): StoredDelivery {
    const delivery: StoredDelivery = {
      id: this.deliveries.length + 1, endpointId, status: "pending", attempts: 0, nextAttemptAtMs: this.now(),
      completedAtMs: undefined, settledReason: undefined, leaseToken: undefined, leaseExpiresAtMs: undefined,
    };
    this.deliveries.push(delivery);
    return delivery;
  }

  /** An endpoint's health as the dispatcher's results left it. */
  healthOf(endpointId: number): EndpointHealth {
    return this.endpoints.get(endpointId)!.health;
  }

  private unleased(delivery: StoredDelivery, now: number): boolean {
    return delivery.leaseExpiresAtMs === undefined || delivery.leaseExpiresAtMs < now;
  }

  private due(delivery: StoredDelivery, policy: DeliveryPolicy, now: number): boolean {
    return delivery.status === "pending" && delivery.nextAttemptAtMs <= now && this.unleased(delivery, now) &&
      (delivery.attempts > 0 || delivery.nextAttemptAtMs <= now - firstAttemptDelayMs(policy));
  }

  claimDue = (limit: number, leaseMs: number, policy: DeliveryPolicy, held: HeldSlots) =>
    Effect.sync(() => {
      this.claims++;
      const now = this.now();
      const taken = new Map<number, number>();
      const due: DueDelivery[] = [];
      const candidates = this.deliveries.filter((delivery) => this.due(delivery, policy, now))
        .sort((a, b) => a.nextAttemptAtMs - b.nextAttemptAtMs || a.id - b.id);
      for (const delivery of candidates) {
        if (due.length === limit) break;
        const endpoint = this.endpoints.get(delivery.endpointId)!;
        const { enabled, circuitOpenUntilMs } = endpoint.health;
        if (!enabled || (circuitOpenUntilMs !== undefined && circuitOpenUntilMs > now)) continue;
        // Half-open (its cooldown over, not yet closed): one attempt at a time.
        const share = circuitOpenUntilMs === undefined ? held.share : 1;
        const inFlight = (held.inFlight.get(endpoint.id) ?? 0) + (taken.get(endpoint.id) ?? 0);
        if (inFlight >= share) continue;
        taken.set(endpoint.id, (taken.get(endpoint.id) ?? 0) + 1);
        delivery.leaseToken = `lease-${++this.leases}`;
        delivery.leaseExpiresAtMs = now + leaseMs;
        due.push({
          id: delivery.id, organizationId: endpoint.organizationId, endpointId: endpoint.id, url: endpoint.url,
          origin: new URL(endpoint.url).origin, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", envelopeId: `evt_${delivery.id}`,
          body: `{"id":"evt_${delivery.id}"}`, attempt: delivery.attempts + 1, leaseToken: delivery.leaseToken, createdAt: new Date(0).toISOString(),
          probe: circuitOpenUntilMs !== undefined,
        });
      }
      return { due, unreadable: [] };
    });

  recordAttempts = (records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy) =>
    Effect.sync(() => {
      const now = this.now();
      const byEndpoint = new Map<number, AttemptOutcome[]>();
      for (const record of records) {
        byEndpoint.set(record.delivery.endpointId, [...(byEndpoint.get(record.delivery.endpointId) ?? []), record.outcome]);
      }
      // The endpoints first: a delivery of one disabled after the batch is not retried (`deliveryToEndpoint`).
      const disabledNow = new Set<number>();
      for (const [endpointId, outcomes] of byEndpoint) {
        const endpoint = this.endpoints.get(endpointId)!;
        const before = endpoint.health;
        endpoint.health = endpointAfterAttempts(before, outcomes, policy, now);
        if (before.enabled && !endpoint.health.enabled) disabledNow.add(endpointId);
      }
      for (const record of records) {
        const delivery = this.deliveries.find((candidate) => candidate.id === record.delivery.id)!;
        const heldLease = delivery.leaseToken === record.delivery.leaseToken;
        this.attempts.push({ deliveryId: delivery.id, attempt: record.delivery.attempt, recordedAtMs: now, outcome: record.outcome, heldLease });
        if (!heldLease) continue;
        const endpointEnabled = this.endpoints.get(delivery.endpointId)!.health.enabled;
        this.settle(delivery, deliveryDecided(record.delivery.attempt, record.outcome, policy.retryScheduleMs, endpointEnabled, now));
        delivery.attempts = Math.max(delivery.attempts, record.delivery.attempt);
      }
      // An endpoint this batch disabled ends its other pending deliveries too.
      for (const delivery of this.deliveries) {
        if (!disabledNow.has(delivery.endpointId) || delivery.status !== "pending") continue;
        this.settle(delivery, deliveryToEndpoint(delivery, false, now));
      }
    });

  /** `delivery` as the domain decided (its due time kept when `next` has none), its lease cleared. */
  private settle(delivery: StoredDelivery, next: DeliveryAfterAttempt & { readonly settledReason: string | undefined }): void {
    delivery.status = next.status;
    delivery.nextAttemptAtMs = next.nextAttemptAtMs ?? delivery.nextAttemptAtMs;
    delivery.completedAtMs = next.completedAtMs;
    delivery.settledReason = next.settledReason;
    delivery.leaseToken = undefined;
    delivery.leaseExpiresAtMs = undefined;
  }

  nextDueInMs = (policy: DeliveryPolicy) =>
    Effect.sync(() => {
      const now = this.now();
      const times = this.deliveries
        .filter((delivery) => delivery.status === "pending" && this.unleased(delivery, now) && this.endpoints.get(delivery.endpointId)!.health.enabled)
        .map((delivery) => {
          const open = this.endpoints.get(delivery.endpointId)!.health.circuitOpenUntilMs;
          if (open !== undefined && open > now) return open;
          return delivery.nextAttemptAtMs + (delivery.attempts === 0 ? firstAttemptDelayMs(policy) : 0);
        });
      return times.length === 0 ? undefined : Math.max(0, Math.min(...times) - now);
    });
}
