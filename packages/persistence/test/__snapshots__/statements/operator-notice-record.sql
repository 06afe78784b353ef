-- The batch's results, one row per attempt.
with results as (select * from jsonb_to_recordset($1::jsonb) as result(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_ms_ago bigint, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint, delivery_created_at timestamptz))
-- Each notice moved as `DELIVERY_DECISION` says, by its lease holder only, and its lease cleared.
update endpoint_notices n set
  operator_status = case when results.outcome = 'succeeded' then 'succeeded'
        when results.retry_delay_ms is null then 'failed'
        else 'pending'
      end,
  operator_attempts = greatest(n.operator_attempts, results.attempt),
  operator_next_attempt_at = coalesce(case when results.outcome = 'succeeded' or results.retry_delay_ms is null then null
        else (now() + results.retry_delay_ms * interval '1 millisecond')
      end, n.operator_next_attempt_at),
  operator_completed_at = case when results.outcome = 'succeeded' or results.retry_delay_ms is null then now() end,
  operator_status_code = results.status_code, operator_error = results.error,
  lease_token = null, lease_expires_at = null
from results where n.id = results.delivery_id and n.lease_token = results.lease_token
