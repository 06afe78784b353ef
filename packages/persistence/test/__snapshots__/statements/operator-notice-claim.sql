with recursive
  -- The claim's numbers, and its one random turn.
  params as materialized (
    select $1::int as claim_limit, $2::int as organization_budget, $3::int as lease_ms, $4::int as organization_share, random() as turn
  ),
  -- What this channel already has in flight per organization.
  organization_held as (select * from jsonb_to_recordset($5::jsonb) as held(organization_id bigint, in_flight int)),
  -- Where the walk over organizations starts (drawn between the lowest and the highest with pending notices) and how far
  -- it goes: the budget, and the organizations at their share besides (walked past).
  organization_range as materialized (
    select bounds.lo + floor(params.turn * (bounds.hi - bounds.lo + 1))::bigint as start,
      params.organization_budget + (
        select count(*) from organization_held where organization_held.in_flight >= params.organization_share
      )::int as budget
    from params,
      (select (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and true order by d.organization_id, d.operator_next_attempt_at limit 1) as lo,
              (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and true order by d.organization_id desc, d.operator_next_attempt_at desc limit 1) as hi) bounds
  ),
  -- The organizations with pending notices, walked from there.
  organization_walk(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and d.organization_id > (select start from organization_range) order by d.organization_id desc, d.operator_next_attempt_at desc limit 1)) as id, below.found is null as wrapped
      from (select (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and d.organization_id <= (select start from organization_range) order by d.organization_id desc, d.operator_next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from organization_walk walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and d.organization_id > (select start from organization_range) order by d.organization_id desc, d.operator_next_attempt_at desc limit 1) end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select (select d.organization_id from endpoint_notices d where d.operator_status = 'pending' and d.organization_id < walked.id and (not walked.wrapped or d.organization_id > (select start from organization_range)) order by d.organization_id desc, d.operator_next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < (select budget from organization_range)
  ),
  -- Each walked organization's oldest due notices nobody holds, as many as it may still claim.
  due as (
    select notice.id, notice.organization_id, notice.operator_next_attempt_at, coalesce(organization_held.in_flight, 0) as held
    from organization_walk walked cross join params
    left join organization_held on organization_held.organization_id = walked.id
    cross join lateral (
      select n.id, n.organization_id, n.operator_next_attempt_at from endpoint_notices n
      where n.organization_id = walked.id and n.operator_status = 'pending' and n.operator_next_attempt_at <= now() and (n.lease_expires_at is null or n.lease_expires_at < now())
      order by n.operator_next_attempt_at, n.id
      limit greatest(0, least(params.claim_limit, params.organization_share - coalesce(organization_held.in_flight, 0)))
    ) notice
  ),
  -- Each one's turn within its organization (its oldest first), after what the organization holds.
  turns as (
    select due.id, due.operator_next_attempt_at, due.held,
      row_number() over (partition by due.organization_id order by due.operator_next_attempt_at, due.id) as turn
    from due
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
