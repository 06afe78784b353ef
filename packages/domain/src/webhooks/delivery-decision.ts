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

/** Why a delivery ended without its attempts deciding it (stored as the delivery's `settled_reason`, shown in the log). */
export const SETTLED_ENDPOINT_DISABLED = "endpoint disabled";

/**
 * A delivery once its endpoint's state after the batch is known: a disabled endpoint is sent
 * nothing, so a delivery of one is never left pending (retention would keep its message for ever):
 * a retry it would have had ends it now as failed, `SETTLED_ENDPOINT_DISABLED`; replay sends it again.
 */
export const deliveryToEndpoint = (
  delivery: DeliveryAfterAttempt, endpointEnabled: boolean, nowMs: number,
): DeliveryAfterAttempt & { readonly settledReason: string | undefined } =>
  endpointEnabled || delivery.status !== "pending"
    ? { ...delivery, settledReason: undefined }
    : { status: "failed", nextAttemptAtMs: undefined, completedAtMs: nowMs, settledReason: SETTLED_ENDPOINT_DISABLED };

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
  /**
   * The operational notice last written for this run of failures (null: none; reset by a success
   * and by enabling or disabling the endpoint, see `endpointSwitched`). Notices only climb (`failing`, `disabling_soon`, `disabled`), so
   * each transition is noticed once, never once per failed attempt.
   */
  readonly noticed: NoticeKind | null;
}

/**
 * What an operational notice says of an endpoint: its circuit opened (it started failing), the
 * failure window has less than the notice period left, or it was disabled (410 or the window).
 */
export type NoticeKind = "failing" | "disabling_soon" | "disabled";

/** Every notice kind, in the order an endpoint's failures reach them. */
export const NOTICE_KINDS: ReadonlyArray<NoticeKind> = ["failing", "disabling_soon", "disabled"];

/** How long before the failure window disables an endpoint the `disabling_soon` notice is written, unless the policy says otherwise. */
export const DEFAULT_DISABLE_NOTICE_MS = 24 * 60 * 60 * 1000;

const noticeRank = (kind: NoticeKind | null): number => (kind === null ? 0 : NOTICE_KINDS.indexOf(kind) + 1);

/** The notice a batch wrote: the endpoint's `noticed` when it climbed, otherwise none. */
export const noticeWritten = (before: EndpointHealth, after: EndpointHealth): NoticeKind | undefined =>
  after.noticed !== null && noticeRank(after.noticed) > noticeRank(before.noticed) ? after.noticed : undefined;

/**
 * The endpoint after a batch of its attempts' results, in no particular order (they ran at once;
 * an `unsendable` one was never sent and is not counted): any success closes its circuit and clears its failures; otherwise each failure adds to those in
 * a row, and `circuitThreshold` of them open the circuit for `circuitCooldownMs` from now (a failed
 * half-open probe opens it again). A 410 disables the endpoint at once; so does failing for longer
 * than `failureWindowMs`. The reason is recorded only when this batch disables it: an endpoint
 * disabled before keeps the reason it was disabled for.
 *
 * Operational notices (`noticed`, see `NoticeKind`), for an enabled endpoint only: `failing` when its
 * circuit opens (`circuitThreshold` failures in a row: one transient failure is not "failing"),
 * `disabling_soon` once the failure window has at most `disableNoticeMs` left, `disabled` when this
 * batch disables it; each written once per run of failures (a later stage only), cleared by a success.
 * A run of failures ends with a success, or when the endpoint is enabled or disabled (`endpointSwitched`).
 */
export const endpointAfterAttempts = (
  health: EndpointHealth,
  outcomes: ReadonlyArray<AttemptOutcome>,
  policy: Pick<DeliveryPolicy, "circuitThreshold" | "circuitCooldownMs" | "failureWindowMs" | "disableNoticeMs">,
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
  const circuitOpens = consecutiveFailures >= policy.circuitThreshold;
  const disablingSoon = failingSinceMs !== undefined &&
    failingSinceMs + policy.failureWindowMs - (policy.disableNoticeMs ?? DEFAULT_DISABLE_NOTICE_MS) <= nowMs;
  const reached: NoticeKind | null = disable ? "disabled" : disablingSoon ? "disabling_soon" : circuitOpens ? "failing" : null;
  // A disabled endpoint's late results notice nothing; a success ends the run of failures (unless a 410 beside it disables).
  const noticed = !health.enabled
    ? health.noticed
    : disable ? "disabled" : anySuccess ? null : noticeRank(reached) > noticeRank(health.noticed) ? reached : health.noticed;
  return {
    consecutiveFailures,
    failingSinceMs,
    circuitOpenUntilMs: circuitOpens ? nowMs + policy.circuitCooldownMs : undefined,
    enabled: health.enabled && !disable,
    disabledReason: health.enabled && disable ? (gone ? DISABLED_GONE : DISABLED_FAILING) : health.disabledReason,
    noticed,
  };
};

/**
 * The endpoint after it is enabled or disabled by hand (the Developer area, the CLI): its run of
 * failures starts over completely, failures in a row, failure window, circuit and notice stage
 * together. Clearing the stage alone let the next single failure "start failing" again (a notice per
 * enable); clearing it all, one failure after enabling is one failure of a new run, and each run
 * notices each stage at most once. Disabling records why (`disabledReason`); enabling clears it.
 * Only a real switch: enabling an enabled endpoint (or disabling a disabled one) changes nothing, or
 * a click would keep a failing endpoint from ever reaching its circuit or being disabled.
 */
export const endpointSwitched = (enabled: boolean, disabledReason: string): EndpointHealth => ({
  consecutiveFailures: 0,
  failingSinceMs: undefined,
  circuitOpenUntilMs: undefined,
  enabled,
  disabledReason: enabled ? null : disabledReason,
  noticed: null,
});
