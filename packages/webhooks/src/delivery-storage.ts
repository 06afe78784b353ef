import type { AttemptRecord, DeliveryPolicy, DueDelivery, HeldSlots } from "@platter/domain";
import type { Effect } from "effect";

/**
 * What the dispatcher needs from storage: persistence's `DeliveryQueue` has this shape, and
 * `InMemoryDeliveryStorage` (this package's testing entry) too, for the loop's unit tests. Due
 * times, leases and circuits are the storage's own time (the database's `now()`).
 */
export interface DeliveryStorage {
  /**
   * Leases up to `limit` due deliveries for `leaseMs`, within `held` (this dispatcher's shares of
   * each endpoint, organization and origin) and each endpoint's circuit (half-open: one at a time).
   * `unreadable` are those whose stored message no longer reads as its type.
   */
  readonly claimDue: (
    limit: number,
    leaseMs: number,
    policy: DeliveryPolicy,
    held: HeldSlots,
  ) => Effect.Effect<{ readonly due: DueDelivery[]; readonly unreadable: DueDelivery[] }>;
  /**
   * Records attempts and applies the domain's decisions (`deliveryAfterAttempt`, by the lease
   * holder only; `endpointAfterAttempts`, per endpoint over the batch).
   */
  readonly recordAttempts: (records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy) => Effect.Effect<void>;
  /** Milliseconds until a claim may find something (undefined: nothing pending). */
  readonly nextDueInMs: (policy: DeliveryPolicy) => Effect.Effect<number | undefined>;
}
