with recursive every_organization(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id > 9223372036854775807 order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1)) as id, below.found is null as wrapped
      from (select (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id <= 9223372036854775807 order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from every_organization walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id > 9223372036854775807 order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id < walked.id and (not walked.wrapped or d.organization_id > 9223372036854775807) order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < 9223372036854775807
  ),
  active(endpoint_id) as (
    select walked_endpoint.id from every_organization cross join lateral (
      with recursive every_endpoint(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = every_organization.id and d.endpoint_id > 9223372036854775807 order by d.endpoint_id desc, d.next_attempt_at desc limit 1)) as id, below.found is null as wrapped
      from (select (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = every_organization.id and d.endpoint_id <= 9223372036854775807 order by d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from every_endpoint walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = every_organization.id and d.endpoint_id > 9223372036854775807 order by d.endpoint_id desc, d.next_attempt_at desc limit 1) end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = every_organization.id and d.endpoint_id < walked.id and (not walked.wrapped or d.endpoint_id > 9223372036854775807) order by d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < 9223372036854775807
  )
      select id from every_endpoint
    ) walked_endpoint
  )
  select extract(epoch from (min(case when e.circuit_open_until > now() then e.circuit_open_until
      else greatest(first.next_attempt_at + case when first.attempts = 0 then $1::int * interval '1 millisecond' else interval '0' end,
        -- A throttled endpoint's bucket has a token again one interval less than a bucket's worth before its arrival time.
        e.throttle_next_at - interval '1 second' * (e.throttle_per_second - 1) / e.throttle_per_second) end) - now())) * 1000 as ms
  from active a join webhook_endpoints e on e.id = a.endpoint_id and e.enabled
  cross join lateral (select d.next_attempt_at, d.attempts from webhook_deliveries d
    where d.organization_id = e.organization_id and d.endpoint_id = e.id and d.status = 'pending' and not d.via_listener and d.created_at <= now() and (d.lease_expires_at is null or d.lease_expires_at < now())
    order by d.next_attempt_at, d.id limit 1) first
