-- The batch's results, one row per attempt.
with results as materialized (select * from jsonb_to_recordset($1::jsonb) as result(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_ms_ago bigint, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint, delivery_created_at timestamptz)),
  -- The delivery policy's numbers.
  policy as materialized (select $2::int as threshold, $3::bigint as cooldown_ms, $4::bigint as window_ms, $5::bigint as notice_ms,
    $6::boolean as notify_operator),
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
  -- Endpoints disabled after this batch (before it, or by it): their deliveries are not retried (`BATCH_DISABLES`).
  disabled_endpoints as materialized (
    select endpoints_before.id from endpoints_before join endpoint_results on endpoint_results.endpoint_id = endpoints_before.id cross join policy
    where not endpoints_before.enabled or (endpoint_results.gone or (not endpoint_results.any_success and coalesce(endpoints_before.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond')))
  ),
  -- Every attempt written to the log, with its next try when the delivery is retried (`DELIVERY_DECISION`'s).
  -- Each carries its delivery's created_at, its partition key (an attempt whose delivery's history is gone is not kept).
  recorded_attempts as (
    insert into webhook_attempts (organization_id, delivery_id, attempt, started_at, duration_ms, status_code, error,
      response_body, next_attempt_at, delivery_created_at)
    select organization_id, delivery_id, attempt, (now() - started_ms_ago * interval '1 millisecond'), duration_ms, status_code, error, response_body,
      case when results.outcome = 'succeeded' or results.retry_delay_ms is null or disabled.id is not null then null
        else (now() + results.retry_delay_ms * interval '1 millisecond')
      end, owner.created_at
    from results join lateral (
        select d.created_at from webhook_deliveries d
        where d.id = results.delivery_id and d.created_at = results.delivery_created_at limit 1
      ) owner on true
      left join disabled_endpoints disabled on disabled.id = results.endpoint_id
  ),
  -- Each delivery moved as the domain's `DELIVERY_DECISION` table says, by its lease holder only, and its lease cleared.
  moved_deliveries as (
    update webhook_deliveries d set
      status = case when results.outcome = 'succeeded' then 'succeeded'
        when results.retry_delay_ms is null or disabled.id is not null then 'failed'
        else 'pending'
      end,
      attempts = greatest(d.attempts, results.attempt),
      next_attempt_at = coalesce(case when results.outcome = 'succeeded' or results.retry_delay_ms is null or disabled.id is not null then null
        else (now() + results.retry_delay_ms * interval '1 millisecond')
      end, d.next_attempt_at),
      completed_at = case when results.outcome = 'succeeded' or results.retry_delay_ms is null or disabled.id is not null then now() end,
      settled_reason = case when results.outcome = 'succeeded' or results.retry_delay_ms is null then null
        when disabled.id is not null then 'endpoint disabled'
      end,
      lease_token = null, lease_expires_at = null
    from results left join disabled_endpoints disabled on disabled.id = results.endpoint_id
    where d.id = results.delivery_id and d.created_at = results.delivery_created_at and d.lease_token = results.lease_token
      -- The batch's times as a range and its ids as an array too: pruned at run time to the partitions the results span, read
      -- by primary key there (joined to the results alone, the planner hashed them against a scan of every partition).
      and d.created_at between (select min(delivery_created_at) from results) and (select max(delivery_created_at) from results)
      and d.id = any(array(select delivery_id from results))
  ),
  -- Each endpoint as the domain's `ENDPOINT_DECISION` says (circuit, failures in a row, disabled, notice stage), written only when something
  -- changes; a deleted endpoint's row is left as its deletion wrote it (a send in flight when it was deleted moves nothing, writes no notice).
  changed_endpoints as (
    update webhook_endpoints e set
      consecutive_failures = case when endpoint_results.any_success then 0 else e.consecutive_failures + endpoint_results.failures end,
      failing_since = case when endpoint_results.any_success then null else coalesce(e.failing_since, now()) end,
      circuit_open_until = case when (case when endpoint_results.any_success then 0 else e.consecutive_failures + endpoint_results.failures end) >= policy.threshold then (now() + policy.cooldown_ms * interval '1 millisecond') end,
      enabled = (e.enabled and not (endpoint_results.gone or (not endpoint_results.any_success and coalesce(e.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond')))),
      disabled_reason = case when e.enabled and (endpoint_results.gone or (not endpoint_results.any_success and coalesce(e.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond'))) then case when endpoint_results.gone then 'endpoint answered 410 Gone' else 'every delivery failed for the whole failure window' end
        else e.disabled_reason
      end,
      notice_stage = case when not e.enabled then e.notice_stage
        when endpoint_results.gone or (not endpoint_results.any_success and coalesce(e.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond')) then 'disabled'
        when endpoint_results.any_success then null
        when (case (case when endpoint_results.gone or (not endpoint_results.any_success and coalesce(e.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond')) then 'disabled' when not endpoint_results.any_success and (coalesce(e.failing_since, now()) + (policy.window_ms - policy.notice_ms) * interval '1 millisecond') <= now() then 'disabling_soon' when (case when endpoint_results.any_success then 0 else e.consecutive_failures + endpoint_results.failures end) >= policy.threshold then 'failing' end) when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end) > (case e.notice_stage when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end) then case when endpoint_results.gone or (not endpoint_results.any_success and coalesce(e.failing_since, now()) < (now() - policy.window_ms * interval '1 millisecond')) then 'disabled' when not endpoint_results.any_success and (coalesce(e.failing_since, now()) + (policy.window_ms - policy.notice_ms) * interval '1 millisecond') <= now() then 'disabling_soon' when (case when endpoint_results.any_success then 0 else e.consecutive_failures + endpoint_results.failures end) >= policy.threshold then 'failing' end
        else e.notice_stage
      end
    from endpoint_results cross join policy join endpoints_before on true
    where e.id = endpoint_results.endpoint_id and endpoints_before.id = e.id and e.deleted_at is null
      and (not endpoint_results.any_success or endpoint_results.gone or e.consecutive_failures <> 0 or e.failing_since is not null
        or e.circuit_open_until is not null or e.notice_stage is not null)
    returning e.organization_id, e.id, e.url, e.notice_stage, endpoints_before.notice_stage as stage_before, e.consecutive_failures,
      e.failing_since, e.disabled_reason, endpoints_before.enabled and not e.enabled as disabled_now
  ),
  -- An endpoint this batch disables ends its other pending deliveries, as disabling it by hand does (`endDeliveriesOfDisabled`).
  ended_deliveries as (
    update webhook_deliveries d set status = 'failed', completed_at = now(), settled_reason = 'endpoint disabled',
  lease_token = null, lease_expires_at = null
    from changed_endpoints changed
    where changed.disabled_now and d.organization_id = changed.organization_id and d.endpoint_id = changed.id and d.status = 'pending'
      and not d.via_listener and d.id not in (select delivery_id from results)
  )
-- The operational notice of each endpoint whose notice stage climbed (`noticeWritten`), or whose noticed failures a success ended (`recoveryWritten`).
insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, disables_at, operator_status)
select changed.organization_id, changed.id, coalesce(changed.notice_stage, 'recovered'),
  case coalesce(changed.notice_stage, 'recovered')
    when 'recovered' then 'a delivery succeeded, which ends its run of failures'
    when 'failing' then changed.consecutive_failures
      || case when changed.consecutive_failures = 1 then ' failed attempt' else ' failed attempts' end || ' in a row, so its circuit is open'
    when 'disabling_soon' then 'every delivery has failed since ' || to_char(changed.failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') ||
      ', and the failure window disables it unless one succeeds'
    else changed.disabled_reason end,
  changed.url,
  case when changed.notice_stage = 'disabling_soon' then (changed.failing_since + policy.window_ms * interval '1 millisecond') end,
  case when policy.notify_operator then 'pending' else 'unsent' end
from changed_endpoints changed cross join policy
where (case changed.notice_stage when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end) > (case changed.stage_before when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end)
  or ((case changed.stage_before when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end) > 0 and (case changed.notice_stage when 'failing' then 1 when 'disabling_soon' then 2 when 'disabled' then 3 else 0 end) = 0)
