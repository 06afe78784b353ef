import {
  ATTEMPT_TEXT_MAX_CHARACTERS, type AttemptRecord, BATCH_DISABLES, DEFAULT_DISABLE_NOTICE_MS, DELIVERY_DECISION, type DELIVERY_INPUTS, type DeliveryColumn,
  type DeliveryPolicy, ENDED_BY_DELETED_ENDPOINT, ENDED_BY_DISABLED_ENDPOINT, ENDED_BY_EXPIRED_HISTORY, ENDPOINT_DECISION, type ENDPOINT_INPUTS, type EndpointColumn, NOTICE_CLIMBS,
  NOTICE_RECOVERS, retryDelayAfter,
  storableTextOrNull,
} from "@platter/domain";
import { timeMinusSql, timePlusSql } from "../database-clock.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type RuleBindings, ruleSql } from "./decision-sql.ts";
import { CLEAR_LEASE, heldBy } from "./lease.ts";

/**
 * Recording attempts: a batch of the dispatcher's results written in one statement, applying the
 * domain's delivery decision to each delivery and endpoint.
 */

/** The columns of one attempt's result, as `jsonb_to_recordset` reads them. */
export const RESULT_COLUMNS = `result(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_ms_ago bigint, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint, delivery_created_at timestamptz)`;

/** jsonb (and text) cannot hold NUL: a receiver's bytes (or an error naming its host) must never make a result unwritable, nor unbounded. */
const storable = (text: string | undefined): string | null => storableTextOrNull(text, ATTEMPT_TEXT_MAX_CHARACTERS);

/** One result as the statement reads it, with the retry schedule's delay for its try (none when not retried). */
export const toResultRow = (r: AttemptRecord, policy: DeliveryPolicy) => ({
  delivery_id: r.delivery.id,
  organization_id: r.delivery.organizationId,
  endpoint_id: r.delivery.endpointId,
  lease_token: r.delivery.leaseToken,
  attempt: r.delivery.attempt,
  // How long ago it started, by the process's clock; the row's time is the database's (`database-clock.ts`).
  started_ms_ago: Math.max(0, Math.round(Date.now() - r.startedAt.getTime())),
  duration_ms: Math.round(r.durationMs),
  status_code: r.statusCode ?? null,
  error: storable(r.error),
  response_body: storable(r.responseBody),
  outcome: r.outcome,
  retry_delay_ms: retryDelayAfter(r.delivery.attempt, r.outcome, policy.retryScheduleMs) ?? null,
  // Its history's partition key: the statement reads one partition of each table.
  delivery_created_at: r.delivery.createdAt,
});

/** The delivery decision's inputs (`DELIVERY_INPUTS`) in the statement: a result and whether its endpoint is in `disabled_endpoints`. */
const DELIVERY_BINDINGS: RuleBindings = {
  outcome: "results.outcome", retryDelayMs: "results.retry_delay_ms", endpointEnabled: "disabled.id is null",
} satisfies Record<typeof DELIVERY_INPUTS[number], string>;

/** The endpoint decision's inputs (`ENDPOINT_INPUTS`) in the statement, the endpoint's row being `endpoint`. */
const endpointBindings = (endpoint: string): RuleBindings => ({
  anySuccess: "endpoint_results.any_success", gone: "endpoint_results.gone", failures: "endpoint_results.failures",
  consecutiveFailures: `${endpoint}.consecutive_failures`, failingSince: `${endpoint}.failing_since`, enabled: `${endpoint}.enabled`,
  disabledReason: `${endpoint}.disabled_reason`, noticed: `${endpoint}.notice_stage`,
  threshold: "policy.threshold", cooldownMs: "policy.cooldown_ms", windowMs: "policy.window_ms", noticeMs: "policy.notice_ms",
} satisfies Record<typeof ENDPOINT_INPUTS[number], string>);

/** `DELIVERY_DECISION`'s column `column` in the statement. */
const delivery = (column: DeliveryColumn) => ruleSql(DELIVERY_DECISION[column], DELIVERY_BINDINGS);
/** `ENDPOINT_DECISION`'s column `column` in the statement, from the row the update finds (`e`, after any concurrent batch). */
const endpoint = (column: EndpointColumn) => ruleSql(ENDPOINT_DECISION[column], endpointBindings("e"));

/** The columns a delivery ended by its endpoint's state gets (`rules`), its lease cleared. */
const endedBy = (rules: typeof ENDED_BY_DISABLED_ENDPOINT) => `status = ${ruleSql(rules.status, {})}, completed_at = ${
  ruleSql(rules.completedAt, {})}, settled_reason = ${ruleSql(rules.settledReason, {})},
  ${CLEAR_LEASE}`;

/**
 * What ending a pending delivery of a disabled endpoint writes (`ENDED_BY_DISABLED_ENDPOINT`): failed now, with
 * `SETTLED_ENDPOINT_DISABLED` as the log's reason; an attempt in flight loses its lease, so its late
 * result is recorded as an attempt but moves nothing. Replay makes it due again.
 */
export const ENDED_DELIVERY = endedBy(ENDED_BY_DISABLED_ENDPOINT);

/** What deleting an endpoint writes to its pending deliveries (`ENDED_BY_DELETED_ENDPOINT`): as `ENDED_DELIVERY`, with "endpoint deleted" as the reason. */
export const ENDED_DELIVERY_OF_DELETED = endedBy(ENDED_BY_DELETED_ENDPOINT);

/** What a pending delivery gets when its history expires (`ENDED_BY_EXPIRED_HISTORY`): as `ENDED_DELIVERY`, with "history expired" as the reason. */
export const ENDED_DELIVERY_OF_EXPIRED_HISTORY = endedBy(ENDED_BY_EXPIRED_HISTORY);

/**
 * A batch of results in one statement (so one transaction, one parse of the batch), applying the
 * domain's decisions at the transaction's `now()`, as SQL generated from the domain's rules
 * (`DELIVERY_DECISION`, `ENDPOINT_DECISION`, `BATCH_DISABLES`, `NOTICE_CLIMBS`; `decision-sql.ts`),
 * never a second copy of them: every attempt recorded; each delivery moved on
 * as `DELIVERY_DECISION` says, by its current lease holder only (a try counts once its result
 * is known); each endpoint as `endpointAfterAttempts` says for its results in the batch (circuit,
 * failures in a row, disabled by a 410 or by failing for the whole window, with the reason only
 * when this batch disables it, and its notice stage), computed from the endpoint's row as the update
 * finds it (so two dispatchers' batches both count), and written only when something changes; and
 * a delivery of an endpoint disabled after the batch is not retried but ends (`deliveryToEndpoint`),
 * and an endpoint this batch disables ends its other pending deliveries too; and
 * the operational notice of each endpoint whose stage climbed (`noticeWritten`), in the same
 * statement. The endpoints' rows are locked first, in id order, so the stage before
 * (`endpoints_before`) is the one the update changes. A property test (`delivery-decision.test.ts`)
 * checks the statement against the domain's functions. Its full text as PostgreSQL runs it:
 * `test/__snapshots__/statements/attempt-record.sql`.
 * Parameters: results (jsonb), threshold, cooldown ms, failure window ms, disable notice ms, notify operator.
 */
export const RECORD = `-- The batch's results, one row per attempt.
with results as materialized (select * from jsonb_to_recordset(?::jsonb) as ${RESULT_COLUMNS}),
  -- The delivery policy's numbers.
  policy as materialized (select ?::int as threshold, ?::bigint as cooldown_ms, ?::bigint as window_ms, ?::bigint as notice_ms,
    ?::boolean as notify_operator),
  -- Per endpoint: whether any attempt succeeded, any said gone (410), and how many failed (unsendable ones count for nothing).
  endpoint_results as (
    select endpoint_id, bool_or(outcome = 'succeeded') as any_success, bool_or(outcome = 'gone') as gone,
      count(*) filter (where outcome <> 'succeeded')::int as failures
    from results where outcome <> 'unsendable' group by endpoint_id
  ),
  -- Those endpoints' rows before this batch, locked in id order (so concurrent batches take turns).
  endpoints_before as materialized (
    select e.id, e.notice_stage, e.enabled, e.failing_since from webhook_endpoints e where e.id in (select endpoint_id from endpoint_results)
    order by e.id for no key update
  ),
  -- Endpoints disabled after this batch (before it, or by it): their deliveries are not retried (\`BATCH_DISABLES\`).
  disabled_endpoints as materialized (
    select endpoints_before.id from endpoints_before join endpoint_results on endpoint_results.endpoint_id = endpoints_before.id cross join policy
    where not endpoints_before.enabled or ${ruleSql(BATCH_DISABLES, endpointBindings("endpoints_before"))}
  ),
  -- Every attempt written to the log, with its next try when the delivery is retried (\`DELIVERY_DECISION\`'s).
  -- Each carries its delivery's created_at, its partition key (an attempt whose delivery's history is gone is not kept).
  recorded_attempts as (
    insert into webhook_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, status_code, error,
      response_body, next_attempt_at, delivery_created_at)
    select organization_id, delivery_id, attempt, ${timeMinusSql("now()", "started_ms_ago")}, duration_ms, status_code, error, response_body,
      ${delivery("nextTry")}, owner.created_at
    from results join lateral (
        select d.created_at from webhook_deliveries d
        where d.id = results.delivery_id and d.created_at = results.delivery_created_at limit 1
      ) owner on true
      left join disabled_endpoints disabled on disabled.id = results.endpoint_id
  ),
  -- Each delivery moved as the domain's \`DELIVERY_DECISION\` table says, by its lease holder only, and its lease cleared.
  moved_deliveries as (
    update webhook_deliveries d set
      status = ${delivery("status")},
      attempts = greatest(d.attempts, results.attempt),
      next_attempt_at = coalesce(${delivery("nextTry")}, d.next_attempt_at),
      completed_at = ${delivery("completedAt")},
      settled_reason = ${delivery("settledReason")},
      ${CLEAR_LEASE}
    from results left join disabled_endpoints disabled on disabled.id = results.endpoint_id
    where d.id = results.delivery_id and d.created_at = results.delivery_created_at and ${heldBy("d", "results.lease_token")}
      -- The batch's times as a range and its ids as an array too: pruned at run time to the partitions the results span, read
      -- by primary key there (joined to the results alone, the planner hashed them against a scan of every partition).
      and d.created_at between (select min(delivery_created_at) from results) and (select max(delivery_created_at) from results)
      and d.id = any(array(select delivery_id from results))
  ),
  -- Each endpoint as the domain's \`ENDPOINT_DECISION\` says (circuit, failures in a row, disabled, notice stage), written only when something
  -- changes; a deleted endpoint's row is left as its deletion wrote it (a send in flight when it was deleted moves nothing, writes no notice).
  changed_endpoints as (
    update webhook_endpoints e set
      consecutive_failures = ${endpoint("consecutiveFailures")},
      failing_since = ${endpoint("failingSince")},
      circuit_open_until = ${endpoint("circuitOpenUntil")},
      enabled = ${endpoint("enabled")},
      disabled_reason = ${endpoint("disabledReason")},
      notice_stage = ${endpoint("noticed")}
    from endpoint_results cross join policy join endpoints_before on true
    where e.id = endpoint_results.endpoint_id and endpoints_before.id = e.id and e.deleted_at is null
      and (not endpoint_results.any_success or endpoint_results.gone or e.consecutive_failures <> 0 or e.failing_since is not null
        or e.circuit_open_until is not null or e.notice_stage is not null)
    returning e.organization_id, e.id, e.url, e.notice_stage, endpoints_before.notice_stage as stage_before, e.consecutive_failures,
      e.failing_since, e.disabled_reason, endpoints_before.enabled and not e.enabled as disabled_now
  ),
  -- An endpoint this batch disables ends its other pending deliveries, as disabling it by hand does (\`endDeliveriesOfDisabled\`).
  ended_deliveries as (
    update webhook_deliveries d set ${ENDED_DELIVERY}
    from changed_endpoints changed
    where changed.disabled_now and d.organization_id = changed.organization_id and d.endpoint_id = changed.id and d.status = 'pending'
      and not d.via_listener and d.id not in (select delivery_id from results)
  )
-- The operational notice of each endpoint whose notice stage climbed (\`noticeWritten\`), or whose noticed failures a success ended (\`recoveryWritten\`).
insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, disables_at, operator_status)
select changed.organization_id, changed.id, coalesce(changed.notice_stage, 'recovered'),
  case coalesce(changed.notice_stage, 'recovered')
    when 'recovered' then 'a delivery succeeded, which ends its run of failures'
    when 'failing' then changed.consecutive_failures
      || case when changed.consecutive_failures = 1 then ' failed attempt' else ' failed attempts' end || ' in a row, so its circuit is open'
    when 'disabling_soon' then 'every delivery has failed since ' || ${isoTimestamp("changed.failing_since")} ||
      ', and the failure window disables it unless one succeeds'
    else changed.disabled_reason end,
  changed.url,
  case when changed.notice_stage = 'disabling_soon' then ${timePlusSql("changed.failing_since", "policy.window_ms")} end,
  case when policy.notify_operator then 'pending' else 'unsent' end
from changed_endpoints changed cross join policy
where ${ruleSql(NOTICE_CLIMBS, { noticed: "changed.stage_before", noticedAfter: "changed.notice_stage" })}
  or ${ruleSql(NOTICE_RECOVERS, { noticed: "changed.stage_before", noticedAfter: "changed.notice_stage" })}`;

/** The recording statement's parameters for `records` under `policy`. */
export const recordValues = (records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy): ReadonlyArray<unknown> => [
  JSON.stringify(records.map((record) => toResultRow(record, policy))), policy.circuitThreshold, policy.circuitCooldownMs, policy.failureWindowMs,
  policy.disableNoticeMs ?? DEFAULT_DISABLE_NOTICE_MS, policy.notifyOperator ?? false,
];
