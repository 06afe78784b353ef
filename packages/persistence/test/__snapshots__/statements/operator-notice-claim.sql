-- The claim's numbers.
with params as materialized (
    select $1::int as claim_limit, $2::int as candidates, $3::int as lease_ms, $4::int as organization_share
  ),
  -- What this channel already has in flight per organization.
  organization_held as (select * from jsonb_to_recordset($5::jsonb) as held(organization_id bigint, in_flight int)),
  -- The oldest due notices nobody holds, at most `candidates` of them.
  due as (
    select n.id, n.organization_id, n.operator_next_attempt_at from endpoint_notices n
    where n.operator_status = 'pending' and n.operator_next_attempt_at <= now() and (n.lease_expires_at is null or n.lease_expires_at < now())
    order by n.operator_next_attempt_at, n.id limit (select candidates from params)
  ),
  -- Each one's turn within its organization (its oldest first), after what the organization holds.
  turns as (
    select due.id, due.operator_next_attempt_at, coalesce(organization_held.in_flight, 0) as held,
      row_number() over (partition by due.organization_id order by due.operator_next_attempt_at, due.id) as turn
    from due left join organization_held on organization_held.organization_id = due.organization_id
  ),
  -- Organizations take turns, none past its share, up to the claim's limit.
  picked as (
    select turns.id from turns cross join params where turns.held + turns.turn <= params.organization_share
    order by turns.held + turns.turn, turns.operator_next_attempt_at, turns.id limit (select claim_limit from params)
  )
-- Leased, checked again on the row the update finds: a notice another dispatcher leased meanwhile is left to it.
update endpoint_notices n set lease_token = gen_random_uuid(), lease_expires_at = (now() + params.lease_ms * interval '1 millisecond')
from params where n.id in (select id from picked) and n.operator_status = 'pending' and (n.lease_expires_at is null or n.lease_expires_at < now())
returning n.id, n.organization_id, n.endpoint_id, n.envelope_id, n.kind, n.reason, n.endpoint_url, to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at,
  to_char(n.disables_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as disables_at, n.operator_attempts + 1 as attempt, n.lease_token
