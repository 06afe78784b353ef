import {
  ATTEMPT_TEXT_MAX_CHARACTERS, type AttemptRecord, DEFAULT_DISABLE_NOTICE_MS, DISABLED_FAILING, DISABLED_GONE, type DeliveryPolicy,
  retryDelayAfter, SETTLED_ENDPOINT_DISABLED, storableTextOrNull,
} from "@platter/domain";
import { isoTimestamp } from "../keyset-page.ts";
import { CLEAR_LEASE, heldBy } from "./lease.ts";

/**
 * Recording attempts: a batch of the dispatcher's results written in one statement, applying the
 * domain's delivery decision to each delivery and endpoint.
 */

/** The columns of one attempt's result, as `jsonb_to_recordset` reads them. */
export const RESULT_COLUMNS = `r(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_ms_ago bigint, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint)`;

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
});

// The endpoint's next state, from the row the update finds (`e`, after any concurrent batch) and its results here (`x`).
const FAILURES_IN_A_ROW = "(case when x.any_success then 0 else e.consecutive_failures + x.failures end)";
const DISABLE_OF = (endpoint: string) =>
  `(x.gone or (not x.any_success and coalesce(${endpoint}.failing_since, now()) < now() - p.window_ms * interval '1 millisecond'))`;
const DISABLE = DISABLE_OF("e");
/**
 * What ending a pending delivery of a disabled endpoint writes (`deliveryToEndpoint`): failed now, with
 * `SETTLED_ENDPOINT_DISABLED` as the log's reason; an attempt in flight loses its lease, so its late
 * result is recorded as an attempt but moves nothing. Replay makes it due again.
 */
export const ENDED_DELIVERY = `status = 'failed', completed_at = now(), settled_reason = '${SETTLED_ENDPOINT_DISABLED}',
  ${CLEAR_LEASE}`;

/** A notice kind's place in the order an endpoint's failures reach them (`NOTICE_KINDS`); 0 for none. */
const RANK = (stage: string) => `(case ${stage} when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end)`;
/** The notice stage this batch reaches, before comparing it with the one already written. */
const REACHED = `(case when ${DISABLE} then 'disabled'
    when not x.any_success and coalesce(e.failing_since, now()) + (p.window_ms - p.notice_ms) * interval '1 millisecond' <= now() then 'disabling_soon'
    when ${FAILURES_IN_A_ROW} >= p.threshold then 'failing' end)`;
/** `endpointAfterAttempts`' `noticed`: only an enabled endpoint's notices climb; a success (not disabling it) clears them. */
const NOTICED = `(case when not e.enabled then e.notice_stage when ${DISABLE} then 'disabled' when x.any_success then null
    when ${RANK(REACHED)} > ${RANK("e.notice_stage")} then ${REACHED} else e.notice_stage end)`;

/**
 * A batch of results in one statement (so one transaction, one parse of the batch), applying the
 * domain's decisions at the transaction's `now()`: every attempt recorded; each delivery moved on
 * as `deliveryAfterAttempt` says, by its current lease holder only (a try counts once its result
 * is known); each endpoint as `endpointAfterAttempts` says for its results in the batch (circuit,
 * failures in a row, disabled by a 410 or by failing for the whole window, with the reason only
 * when this batch disables it, and its notice stage), computed from the endpoint's row as the update
 * finds it (so two dispatchers' batches both count), and written only when something changes; and
 * a delivery of an endpoint disabled after the batch is not retried but ends (`deliveryToEndpoint`),
 * and an endpoint this batch disables ends its other pending deliveries too; and
 * the operational notice of each endpoint whose stage climbed (`noticeWritten`), in the same
 * statement. The endpoints' rows are locked first, in id order, so the stage before (`b`) is the one
 * the update changes. A property test (`delivery-decision.test.ts`) checks the statement against
 * those functions.
 * Parameters: results (jsonb), threshold, cooldown ms, failure window ms, disable notice ms, notify operator.
 */
export const RECORD = `with r as materialized (select * from jsonb_to_recordset(?::jsonb) as ${RESULT_COLUMNS}),
  p as materialized (select ?::int as threshold, ?::bigint as cooldown_ms, ?::bigint as window_ms, ?::bigint as notice_ms,
    ?::boolean as notify_operator),
  s as (
    select endpoint_id, bool_or(outcome = 'succeeded') as any_success, bool_or(outcome = 'gone') as gone,
      count(*) filter (where outcome <> 'succeeded')::int as failures
    from r where outcome <> 'unsendable' group by endpoint_id
  ),
  b as materialized (
    select e.id, e.notice_stage, e.enabled, e.failing_since from webhook_endpoints e where e.id in (select endpoint_id from s)
    order by e.id for no key update
  ),
  -- Endpoints disabled after this batch (before it, or by it): their deliveries are not retried (\`deliveryToEndpoint\`).
  off as materialized (select b.id from b join s x on x.endpoint_id = b.id cross join p where not b.enabled or ${DISABLE_OF("b")}),
  attempts as (
    insert into webhook_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, status_code, error,
      response_body, next_attempt_at)
    select organization_id, delivery_id, attempt, now() - started_ms_ago * interval '1 millisecond', duration_ms, status_code, error, response_body,
      case when r.endpoint_id not in (select id from off) then now() + retry_delay_ms * interval '1 millisecond' end
    from r
  ),
  moved as (
    update webhook_deliveries d set
      status = case when r.outcome = 'succeeded' then 'succeeded' when r.retry_delay_ms is null or z.id is not null then 'failed' else 'pending' end,
      attempts = greatest(d.attempts, r.attempt),
      next_attempt_at = case when z.id is null then coalesce(now() + r.retry_delay_ms * interval '1 millisecond', d.next_attempt_at)
                             else d.next_attempt_at end,
      completed_at = case when r.retry_delay_ms is null or z.id is not null then now() end,
      settled_reason = case when r.outcome <> 'succeeded' and r.retry_delay_ms is not null and z.id is not null then '${SETTLED_ENDPOINT_DISABLED}' end,
      ${CLEAR_LEASE}
    from r left join off z on z.id = r.endpoint_id
    where d.id = r.delivery_id and ${heldBy("d", "r.lease_token")}
  ),
  changed as (
    update webhook_endpoints e set
      consecutive_failures = ${FAILURES_IN_A_ROW},
      failing_since = case when x.any_success then null else coalesce(e.failing_since, now()) end,
      circuit_open_until = case when ${FAILURES_IN_A_ROW} >= p.threshold then now() + p.cooldown_ms * interval '1 millisecond' end,
      enabled = e.enabled and not ${DISABLE},
      disabled_reason = case when e.enabled and ${DISABLE}
                             then case when x.gone then '${DISABLED_GONE}' else '${DISABLED_FAILING}' end
                             else e.disabled_reason end,
      notice_stage = ${NOTICED}
    from s x cross join p join b on true
    where e.id = x.endpoint_id and b.id = e.id
      and (not x.any_success or x.gone or e.consecutive_failures <> 0 or e.failing_since is not null or e.circuit_open_until is not null
        or e.notice_stage is not null)
    returning e.organization_id, e.id, e.url, e.notice_stage, b.notice_stage as stage_before, e.consecutive_failures, e.failing_since,
      e.disabled_reason, b.enabled and not e.enabled as disabled_now
  ),
  -- An endpoint this batch disables ends its other pending deliveries, as disabling it by hand does (\`endDeliveriesOfDisabled\`).
  ended as (
    update webhook_deliveries d set ${ENDED_DELIVERY}
    from changed c
    where c.disabled_now and d.organization_id = c.organization_id and d.endpoint_id = c.id and d.status = 'pending' and not d.via_listener
      and d.id not in (select delivery_id from r)
  )
  insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, disables_at, operator_status)
  select c.organization_id, c.id, c.notice_stage,
    case c.notice_stage
      when 'failing' then c.consecutive_failures || case when c.consecutive_failures = 1 then ' failed attempt' else ' failed attempts' end || ' in a row, so its circuit is open'
      when 'disabling_soon' then 'every delivery has failed since ' || ${isoTimestamp("c.failing_since")} ||
        ', and the failure window disables it unless one succeeds'
      else c.disabled_reason end,
    c.url,
    case when c.notice_stage = 'disabling_soon' then c.failing_since + p.window_ms * interval '1 millisecond' end,
    case when p.notify_operator then 'pending' else 'unsent' end
  from changed c cross join p
  where ${RANK("c.notice_stage")} > ${RANK("c.stage_before")}`;

/** The recording statement's parameters for `records` under `policy`. */
export const recordValues = (records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy): ReadonlyArray<unknown> => [
  JSON.stringify(records.map((record) => toResultRow(record, policy))), policy.circuitThreshold, policy.circuitCooldownMs, policy.failureWindowMs,
  policy.disableNoticeMs ?? DEFAULT_DISABLE_NOTICE_MS, policy.notifyOperator ?? false,
];
