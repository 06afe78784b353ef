import type { Effect } from "effect";
import type { DatabaseUnavailable } from "../errors.ts";
import type { AttemptRecord, DeliveryPolicy, DueDelivery, HeldSlots } from "./delivery.ts";

/**
 * The delivery queue as the dispatcher loop needs it: persistence's `DeliveryQueue` is one (on
 * PostgreSQL, its time the database's `now()`), the webhooks package's `InMemoryDeliveryStorage`
 * another (for the loop's unit tests, on a test's clock). A database outage fails with `DatabaseUnavailable`.
 */
export interface DeliveryStorage {
  /**
   * Leases up to `limit` due deliveries for `leaseMs`, fairly and within `held` (this dispatcher's
   * shares of each endpoint, organization and origin) and each endpoint's circuit (half-open: one at
   * a time), with the bytes to send. `unreadable` are those whose stored message no longer reads as
   * its type: nothing sensible can be sent, the caller settles them as `unsendable`. `unopened`
   * counts those left under their lease, unsent, because this process's keys do not open their
   * endpoint's signing secret (a key missing here): they come back when the lease ends, to a process
   * that can open it, and the rest of the claim is sent as usual.
   */
  readonly claimDue: (
    limit: number,
    leaseMs: number,
    policy: DeliveryPolicy,
    held: HeldSlots,
  ) => Effect.Effect<{ readonly due: DueDelivery[]; readonly unreadable: DueDelivery[]; readonly unopened?: number }, DatabaseUnavailable>;
  /**
   * Records attempts and applies the domain's decisions: `deliveryAfterAttempt` by the lease holder
   * only (a result whose lease was lost is logged and moves nothing), `endpointAfterAttempts` per
   * endpoint over the batch.
   */
  readonly recordAttempts: (records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy) => Effect.Effect<void, DatabaseUnavailable>;
  /**
   * For a dispatcher with nothing in flight: milliseconds until a claim may find something
   * (undefined when nothing is pending), to sleep exactly; an open circuit counts from its end.
   */
  readonly nextDueInMs: (policy: DeliveryPolicy) => Effect.Effect<number | undefined, DatabaseUnavailable>;
}
