import {
  and, cases, coalesce, compare, earlier, evaluateColumns, evaluateRule, input, isNull, later, match, minus, not, NOW, or, plus, type Rule, type RuleValue,
  tableColumns, value,
} from "./decision-rules.ts";
import type { AttemptOutcome, DeliveryPolicy } from "./delivery.ts";

/**
 * What happens after attempts, decided in one place: given a delivery's attempt and its result, or
 * an endpoint's health and a batch of its results, the policy and now, the next state. It is written
 * once, as data (`decision-rules.ts`): `DELIVERY_DECISION` (a table, conditions → the delivery's
 * columns) and `ENDPOINT_DECISION` (a rule per endpoint column). The functions here evaluate them (the
 * in-memory storage of the dispatcher's unit tests calls these); persistence's record statement is
 * generated from the same rules (`decision-sql.ts`), and a property test checks what it writes against
 * these functions. Times are milliseconds of one clock: the storage's (the database's `now()`; the
 * test's clock for the in-memory storage).
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

/** Why a delivery ended without its attempts deciding it (stored as the delivery's `settled_reason`, shown in the log). */
export const SETTLED_ENDPOINT_DISABLED = "endpoint disabled";
/** Why a delivery ended when its endpoint was deleted (its `settled_reason`, shown in the log). */
export const SETTLED_ENDPOINT_DELETED = "endpoint deleted";
/** Why a delivery still pending ended when its history reached the retention (its partition is about to be dropped): shown in the log, replayable until it goes. */
export const SETTLED_HISTORY_EXPIRED = "history expired";

/**
 * The inputs of `DELIVERY_DECISION`: the attempt's `outcome`, `retryDelayMs` (the retry schedule's
 * delay after it, `retryDelayAfter`; null when it is not retried) and `endpointEnabled` (its
 * endpoint after the batch, `endpointAfterAttempts`).
 */
export const DELIVERY_INPUTS = ["outcome", "retryDelayMs", "endpointEnabled"] as const;

/** A delivery's columns after an attempt: `nextTry` null leaves its due time as it was. */
export type DeliveryColumn = "status" | "nextTry" | "completedAt" | "settledReason";

/** The delivery when its endpoint is disabled: a disabled endpoint is sent nothing, so its pending deliveries end now. */
export const ENDED_BY_DISABLED_ENDPOINT: Readonly<Record<DeliveryColumn, Rule>> = {
  status: value("failed"), nextTry: value(null), completedAt: NOW, settledReason: value(SETTLED_ENDPOINT_DISABLED),
};

/**
 * The delivery when its endpoint is deleted: ended now as a disabled endpoint's are
 * (`ENDED_BY_DISABLED_ENDPOINT`), with `SETTLED_ENDPOINT_DELETED` as the reason the log shows.
 */
export const ENDED_BY_DELETED_ENDPOINT: Readonly<Record<DeliveryColumn, Rule>> = {
  ...ENDED_BY_DISABLED_ENDPOINT, settledReason: value(SETTLED_ENDPOINT_DELETED),
};

/** The delivery still pending when its history expires: ended now as a disabled endpoint's are, with `SETTLED_HISTORY_EXPIRED` as the reason. */
export const ENDED_BY_EXPIRED_HISTORY: Readonly<Record<DeliveryColumn, Rule>> = {
  ...ENDED_BY_DISABLED_ENDPOINT, settledReason: value(SETTLED_HISTORY_EXPIRED),
};

/**
 * The delivery decision, a table: the delivery after try number n ended with `outcome`. A success is
 * done; a 410 fails it for good (the endpoint is gone), as does a message that cannot be sent, and a
 * failure once the retry schedule is exhausted (no `retryDelayMs`); a retry to an endpoint disabled
 * after the batch ends it (`ENDED_BY_DISABLED_ENDPOINT`: retention would otherwise keep its message for
 * ever; replay sends it again); otherwise it is tried again `retryDelayMs` from now. The record
 * statement applies the same table in SQL.
 */
export const DELIVERY_DECISION = tableColumns<DeliveryColumn>([
  {
    when: compare(input("outcome"), "=", value("succeeded")),
    then: { status: value("succeeded"), nextTry: value(null), completedAt: NOW, settledReason: value(null) },
  },
  {
    when: isNull(input("retryDelayMs")),
    then: { status: value("failed"), nextTry: value(null), completedAt: NOW, settledReason: value(null) },
  },
  { when: not(input("endpointEnabled")), then: ENDED_BY_DISABLED_ENDPOINT },
], { status: value("pending"), nextTry: later(NOW, input("retryDelayMs")), completedAt: value(null), settledReason: value(null) });

/** The delivery as a decided row says: `DeliveryAfterAttempt` and why it ended, if its endpoint ended it. */
const deliveryOf = (row: Record<DeliveryColumn, RuleValue>): DeliveryAfterAttempt & { readonly settledReason: string | undefined } => ({
  status: row.status as DeliveryAfterAttempt["status"],
  nextAttemptAtMs: (row.nextTry ?? undefined) as number | undefined,
  completedAtMs: (row.completedAt ?? undefined) as number | undefined,
  settledReason: (row.settledReason ?? undefined) as string | undefined,
});

/**
 * The delivery after try number `attempt` ended with `outcome`, its endpoint enabled or not after the
 * batch: `DELIVERY_DECISION`, as the record statement applies it.
 */
export const deliveryDecided = (
  attempt: number, outcome: AttemptOutcome, retryScheduleMs: ReadonlyArray<number>, endpointEnabled: boolean, nowMs: number,
): DeliveryAfterAttempt & { readonly settledReason: string | undefined } =>
  deliveryOf(evaluateColumns(DELIVERY_DECISION, {
    outcome, retryDelayMs: retryDelayAfter(attempt, outcome, retryScheduleMs) ?? null, endpointEnabled,
  } satisfies Record<typeof DELIVERY_INPUTS[number], RuleValue>, nowMs));

/**
 * The delivery after try number `attempt` ended with `outcome`, its endpoint enabled
 * (`deliveryDecided`): done, failed for good, or pending its next try.
 */
export const deliveryAfterAttempt = (
  attempt: number,
  outcome: AttemptOutcome,
  retryScheduleMs: ReadonlyArray<number>,
  nowMs: number,
): DeliveryAfterAttempt => {
  const { settledReason: _none, ...delivery } = deliveryDecided(attempt, outcome, retryScheduleMs, true, nowMs);
  return delivery;
};

/**
 * How long after try number `attempt` ended with `outcome` the next try is due: the schedule's delay
 * for that many tries made, for a plain failure only; `undefined` when there is no next try.
 */
export const retryDelayAfter = (attempt: number, outcome: AttemptOutcome, retryScheduleMs: ReadonlyArray<number>): number | undefined =>
  outcome === "failed" ? retryScheduleMs[attempt] : undefined;

/**
 * A delivery once its endpoint's state is known: one left pending to a disabled endpoint ends now
 * (`ENDED_BY_DISABLED_ENDPOINT`, as `DELIVERY_DECISION` says for a retry, and as disabling an
 * endpoint by hand ends its pending deliveries); any other is as it was.
 */
export const deliveryToEndpoint = (
  delivery: DeliveryAfterAttempt, endpointEnabled: boolean, nowMs: number,
): DeliveryAfterAttempt & { readonly settledReason: string | undefined } =>
  endpointEnabled || delivery.status !== "pending"
    ? { ...delivery, settledReason: undefined }
    : deliveryOf(evaluateColumns(ENDED_BY_DISABLED_ENDPOINT, {}, nowMs));

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


/**
 * The inputs of `ENDPOINT_DECISION`: this batch's results for the endpoint (`anySuccess`, `gone`: any
 * 410, `failures`: those not succeeding; unsendable ones are not counted, and an endpoint with none
 * left is not decided), its health before (`consecutiveFailures`, `failingSince`, `enabled`,
 * `disabledReason`, `noticed`) and the policy (`threshold`, `cooldownMs`, `windowMs`, `noticeMs`).
 */
export const ENDPOINT_INPUTS = [
  "anySuccess", "gone", "failures", "consecutiveFailures", "failingSince", "enabled", "disabledReason", "noticed",
  "threshold", "cooldownMs", "windowMs", "noticeMs",
] as const;

/** A notice kind's place in the order an endpoint's failures reach them (`NOTICE_KINDS`); 0 for none. */
const rankOf = (kind: Rule): Rule => match(kind, NOTICE_KINDS.map((stage, i) => [stage, value(i + 1)] as const), value(0));

/** Whether the notice stage climbed from `noticed` (before) to `noticedAfter`: then the batch writes that notice (`noticeWritten`). */
export const NOTICE_CLIMBS: Rule = compare(rankOf(input("noticedAfter")), ">", rankOf(input("noticed")));

/** What a notice row tells: a stage its endpoint reached, or that a noticed run of failures ended with a success (`recovered`). */
export type WrittenNoticeKind = NoticeKind | "recovered";

/**
 * Whether a batch ended a noticed run of failures (a stage written before, none after: a success,
 * the endpoint still enabled): then the batch writes a `recovered` notice (`recoveryWritten`). A
 * run that never reached a stage (one failure, then a success) tells nobody anything.
 */
export const NOTICE_RECOVERS: Rule = and(compare(rankOf(input("noticed")), ">", value(0)), compare(rankOf(input("noticedAfter")), "=", value(0)));

/** Whether the batch from `before` to `after` wrote a `recovered` notice (`NOTICE_RECOVERS`). */
export const recoveryWritten = (before: EndpointHealth, after: EndpointHealth): boolean =>
  evaluateRule(NOTICE_RECOVERS, { noticed: before.noticed, noticedAfter: after.noticed }, 0) === true;

/** Every notice a batch wrote, as the record statement writes it: the stage it climbed to (`noticeWritten`), or `recovered`. */
export const noticeRowWritten = (before: EndpointHealth, after: EndpointHealth): WrittenNoticeKind | undefined =>
  noticeWritten(before, after) ?? (recoveryWritten(before, after) ? "recovered" : undefined);

/** The notice a batch wrote: the endpoint's `noticed` when it climbed (`NOTICE_CLIMBS`), otherwise none. */
export const noticeWritten = (before: EndpointHealth, after: EndpointHealth): NoticeKind | undefined =>
  evaluateRule(NOTICE_CLIMBS, { noticed: before.noticed, noticedAfter: after.noticed }, 0) === true ? after.noticed ?? undefined : undefined;

/** Failed attempts in a row after the batch: none after a success, else those before plus the batch's. */
const FAILURES_IN_A_ROW = cases([[input("anySuccess"), value(0)]], plus(input("consecutiveFailures"), input("failures")));
/** When the run of failures began: none after a success, else when it began before, or now. */
const FAILING_SINCE = cases([[input("anySuccess"), value(null)]], coalesce(input("failingSince"), NOW));
/** The batch leaves the endpoint disabled if it was enabled: a 410, or failing for longer than the failure window. */
export const BATCH_DISABLES = or(
  input("gone"),
  and(not(input("anySuccess")), compare(coalesce(input("failingSince"), NOW), "<", earlier(NOW, input("windowMs")))),
);
/** The circuit opens: `threshold` failures in a row. */
const CIRCUIT_OPENS = compare(FAILURES_IN_A_ROW, ">=", input("threshold"));
/** The failure window has at most `noticeMs` left. */
const DISABLING_SOON = and(not(input("anySuccess")),
  compare(later(coalesce(input("failingSince"), NOW), minus(input("windowMs"), input("noticeMs"))), "<=", NOW));
/** The notice stage the batch reaches, before comparing it with the one already written. */
const REACHED = cases([[BATCH_DISABLES, value("disabled")], [DISABLING_SOON, value("disabling_soon")], [CIRCUIT_OPENS, value("failing")]]);

/** An endpoint's columns after a batch (`EndpointHealth`'s fields). */
export type EndpointColumn = "consecutiveFailures" | "failingSince" | "circuitOpenUntil" | "enabled" | "disabledReason" | "noticed";

/**
 * The endpoint decision: each of its columns after a batch of its attempts' results, in no particular
 * order (they ran at once), as a rule of `ENDPOINT_INPUTS` (see `endpointAfterAttempts`). The record
 * statement applies the same rules in SQL, and `BATCH_DISABLES` for the deliveries of the batch.
 */
export const ENDPOINT_DECISION: Readonly<Record<EndpointColumn, Rule>> = {
  consecutiveFailures: FAILURES_IN_A_ROW,
  failingSince: FAILING_SINCE,
  circuitOpenUntil: cases([[CIRCUIT_OPENS, later(NOW, input("cooldownMs"))]]),
  enabled: and(input("enabled"), not(BATCH_DISABLES)),
  // Recorded only when this batch disables it: an endpoint disabled before keeps its reason.
  disabledReason: cases([[and(input("enabled"), BATCH_DISABLES), cases([[input("gone"), value(DISABLED_GONE)]], value(DISABLED_FAILING))]],
    input("disabledReason")),
  // A disabled endpoint's late results notice nothing; a success ends the run of failures (unless a 410 beside it disables).
  noticed: cases([
    [not(input("enabled")), input("noticed")],
    [BATCH_DISABLES, value("disabled")],
    [input("anySuccess"), value(null)],
    [compare(rankOf(REACHED), ">", rankOf(input("noticed"))), REACHED],
  ], input("noticed")),
};

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
 * Decided by `ENDPOINT_DECISION`.
 */
export const endpointAfterAttempts = (
  health: EndpointHealth,
  outcomes: ReadonlyArray<AttemptOutcome>,
  policy: Pick<DeliveryPolicy, "circuitThreshold" | "circuitCooldownMs" | "failureWindowMs" | "disableNoticeMs">,
  nowMs: number,
): EndpointHealth => {
  const sent = outcomes.filter((outcome) => outcome !== "unsendable");
  if (sent.length === 0) return health;
  const after = evaluateColumns(ENDPOINT_DECISION, {
    anySuccess: sent.includes("succeeded"),
    gone: sent.includes("gone"),
    failures: sent.filter((outcome) => outcome !== "succeeded").length,
    consecutiveFailures: health.consecutiveFailures,
    failingSince: health.failingSinceMs ?? null,
    enabled: health.enabled,
    disabledReason: health.disabledReason,
    noticed: health.noticed,
    threshold: policy.circuitThreshold,
    cooldownMs: policy.circuitCooldownMs,
    windowMs: policy.failureWindowMs,
    noticeMs: policy.disableNoticeMs ?? DEFAULT_DISABLE_NOTICE_MS,
  } satisfies Record<typeof ENDPOINT_INPUTS[number], RuleValue>, nowMs);
  return {
    consecutiveFailures: after.consecutiveFailures as number,
    failingSinceMs: (after.failingSince ?? undefined) as number | undefined,
    circuitOpenUntilMs: (after.circuitOpenUntil ?? undefined) as number | undefined,
    enabled: after.enabled as boolean,
    disabledReason: after.disabledReason as string | null,
    noticed: after.noticed as NoticeKind | null,
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
