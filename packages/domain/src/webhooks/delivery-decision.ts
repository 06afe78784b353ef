import type { AttemptOutcome, DeliveryPolicy } from "./delivery.ts";

/**
 * What happens after attempts, decided in one place: given a delivery's attempt and its result, or
 * an endpoint's health and a batch of its results, the policy and now, the next state. The
 * dispatcher's storage applies these (persistence's `recordAttempts`, whose endpoint update is
 * checked against `endpointAfterAttempts` by a property test), and the in-memory storage of the
 * dispatcher's unit tests applies them as they are. Times are milliseconds of one clock: the
 * storage's (the database's `now()`; the test's clock for the in-memory storage).
 */

/** Why an endpoint was disabled by its attempts' results (stored as `disabled_reason`). */
export const DISABLED_GONE = "endpoint answered 410 Gone";
export const DISABLED_FAILING = "every delivery failed for the whole failure window";

/** A delivery after one attempt: succeeded, failed for good, or pending its next try. */
export interface DeliveryAfterAttempt {
  readonly status: "succeeded" | "failed" | "pending";
  /** When pending: when the next try is due. Otherwise the due time is left as it was. */
  readonly nextAttemptAtMs: number | undefined;
  /** When finished (succeeded, or failed for good): now. */
  readonly completedAtMs: number | undefined;
}

/**
 * The delivery after try number `attempt` ended with `outcome`: a success is done; a 410 fails it
 * for good (the endpoint is gone), as does a message that cannot be sent; another failure is tried
 * again after the schedule's delay for that many tries made, or fails for good once the schedule
 * is exhausted.
 */
export const deliveryAfterAttempt = (
  attempt: number,
  outcome: AttemptOutcome,
  retryScheduleMs: ReadonlyArray<number>,
  nowMs: number,
): DeliveryAfterAttempt => {
  if (outcome === "succeeded") return { status: "succeeded", nextAttemptAtMs: undefined, completedAtMs: nowMs };
  const retryDelayMs = retryDelayAfter(attempt, outcome, retryScheduleMs);
  return retryDelayMs === undefined
    ? { status: "failed", nextAttemptAtMs: undefined, completedAtMs: nowMs }
    : { status: "pending", nextAttemptAtMs: nowMs + retryDelayMs, completedAtMs: undefined };
};

/**
 * How long after try number `attempt` ended with `outcome` the next try is due: the schedule's delay
 * for that many tries made, for a plain failure only; `undefined` when there is no next try.
 */
export const retryDelayAfter = (attempt: number, outcome: AttemptOutcome, retryScheduleMs: ReadonlyArray<number>): number | undefined =>
  outcome === "failed" ? retryScheduleMs[attempt] : undefined;

/** What the dispatcher knows of an endpoint's health. */
export interface EndpointHealth {
  /** Failed attempts since its last success. */
  readonly consecutiveFailures: number;
  /** When the failures in a row began (undefined: its last attempt succeeded). */
  readonly failingSinceMs: number | undefined;
  /** Its circuit is open until then (undefined: closed); `circuitState` reads it. */
  readonly circuitOpenUntilMs: number | undefined;
  readonly enabled: boolean;
  readonly disabledReason: string | null;
}

/**
 * The endpoint after a batch of its attempts' results, in no particular order (they ran at once;
 * an `unsendable` one was never sent and is not counted): any success closes its circuit and clears its failures; otherwise each failure adds to those in
 * a row, and `circuitThreshold` of them open the circuit for `circuitCooldownMs` from now (a failed
 * half-open probe opens it again). A 410 disables the endpoint at once; so does failing for longer
 * than `failureWindowMs`. The reason is recorded only when this batch disables it: an endpoint
 * disabled before keeps the reason it was disabled for.
 */
export const endpointAfterAttempts = (
  health: EndpointHealth,
  outcomes: ReadonlyArray<AttemptOutcome>,
  policy: Pick<DeliveryPolicy, "circuitThreshold" | "circuitCooldownMs" | "failureWindowMs">,
  nowMs: number,
): EndpointHealth => {
  const sent = outcomes.filter((outcome) => outcome !== "unsendable");
  if (sent.length === 0) return health;
  const anySuccess = sent.includes("succeeded");
  const gone = sent.includes("gone");
  const failures = sent.filter((outcome) => outcome !== "succeeded").length;
  const consecutiveFailures = anySuccess ? 0 : health.consecutiveFailures + failures;
  const failingSinceMs = anySuccess ? undefined : (health.failingSinceMs ?? nowMs);
  const failingTooLong = failingSinceMs !== undefined && failingSinceMs < nowMs - policy.failureWindowMs;
  const disable = gone || failingTooLong;
  return {
    consecutiveFailures,
    failingSinceMs,
    circuitOpenUntilMs: consecutiveFailures >= policy.circuitThreshold ? nowMs + policy.circuitCooldownMs : undefined,
    enabled: health.enabled && !disable,
    disabledReason: health.enabled && disable ? (gone ? DISABLED_GONE : DISABLED_FAILING) : health.disabledReason,
  };
};
