with recursive
  -- The claim's numbers, and its one random turn.
  params as materialized (
    -- now() once, behind the materialized CTE: the planner then estimates the circuit test as it did
    -- a bound time; written as now() there, it chose a plan reading 20,100 rows per claim at 100
    -- endpoints (bench:webhooks, many-endpoints) against 1,846.
    select $1::int as share, now() as now_at, $2::int as organization_share, $3::int as origin_connections,
      $4::int as origin_share, $5::int as claim_limit, $6::int as first_try_delay_ms, $7::int as organization_budget, $8::int as lease_ms,
      random() as turn
  ),
  -- What this dispatcher has in flight: per endpoint, per organization, per origin.
  held as (select * from jsonb_to_recordset($9::jsonb) as held(endpoint_id bigint, in_flight int)),
  organization_held as (select * from jsonb_to_recordset($10::jsonb) as organization_held(organization_id bigint, in_flight int)),
  origin_held as (select * from jsonb_to_recordset($11::jsonb) as origin_held(origin text, in_flight int)),
  -- The endpoints it holds slots at, with their organization and origin.
  held_endpoints as materialized (
    select held.endpoint_id, held.in_flight, e.organization_id, e.origin from held join webhook_endpoints e on e.id = held.endpoint_id
  ),
  -- What it has in flight per organization at each origin.
  organization_origin_held as (
    select organization_id, origin, sum(in_flight)::int as in_flight from held_endpoints group by organization_id, origin
  ),
  -- Where the walk over organizations starts (drawn between the lowest and the highest with work) and how far it goes.
  organization_range as materialized (
    select bounds.lo + floor(params.turn * (bounds.hi - bounds.lo + 1))::bigint as start, params.organization_budget as budget
    from params,
      (select (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and true order by d.organization_id, d.endpoint_id, d.next_attempt_at limit 1) as lo, (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and true order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) as hi) bounds
  ),
  -- The organizations with pending deliveries, walked from there.
  organization_walk(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id > (select start from organization_range) order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1)) as id, below.found is null as wrapped
      from (select (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id <= (select start from organization_range) order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from organization_walk walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id > (select start from organization_range) order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select (select d.organization_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id < walked.id and (not walked.wrapped or d.organization_id > (select start from organization_range)) order by d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < (select budget from organization_range)
  ),
  -- Of those, the ones below their share here, with what each holds and may still take.
  walked_organizations as (
    select walked.id as organization_id, coalesce(organization_held.in_flight, 0) as organization_held,
      params.organization_share - coalesce(organization_held.in_flight, 0) as organization_free, count(*) over () as organizations
    from organization_walk walked cross join params left join organization_held on organization_held.organization_id = walked.id
    where params.organization_share - coalesce(organization_held.in_flight, 0) > 0
  ),
  -- Per organization, its endpoints at their cap here (walked past, so not counted against its walk).
  at_cap as (
    select held_endpoints.organization_id, count(*)::int as endpoints
    from held_endpoints cross join params where held_endpoints.in_flight >= params.share group by held_endpoints.organization_id
  ),
  -- Each walked organization's endpoints with pending deliveries, walked from a random one, as many as it may fill.
  candidates as (
    select organization.organization_id, organization.organization_held, organization.organization_free, walked_endpoint.id as endpoint_id
    from walked_organizations organization cross join params left join at_cap on at_cap.organization_id = organization.organization_id
    cross join lateral (
      select bounds.lo + floor(params.turn * (bounds.hi - bounds.lo + 1))::bigint as start,
        least(organization.organization_free, greatest(1, ceil(2.0 * params.claim_limit / organization.organizations)))::int
          + coalesce(at_cap.endpoints, 0) as budget
      from (select (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and true order by d.endpoint_id, d.next_attempt_at limit 1) as lo,
                   (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and true order by d.endpoint_id desc, d.next_attempt_at desc limit 1) as hi offset 0) bounds
      offset 0
    ) endpoint_range
    cross join lateral (
      with recursive endpoint_walk(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and d.endpoint_id > endpoint_range.start order by d.endpoint_id desc, d.next_attempt_at desc limit 1)) as id, below.found is null as wrapped
      from (select (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and d.endpoint_id <= endpoint_range.start order by d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from endpoint_walk walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and d.endpoint_id > endpoint_range.start order by d.endpoint_id desc, d.next_attempt_at desc limit 1) end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select (select d.endpoint_id from webhook_deliveries d where d.status = 'pending' and not d.via_listener and d.created_at <= now() and d.organization_id = organization.organization_id and d.endpoint_id < walked.id and (not walked.wrapped or d.endpoint_id > endpoint_range.start) order by d.endpoint_id desc, d.next_attempt_at desc limit 1) as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < endpoint_range.budget
  )
      select id from endpoint_walk
    ) walked_endpoint
  ),
  -- Of those, the endpoints this dispatcher may send to now (enabled, circuit not open, a delivery due), with the
  -- slots free at each: at the endpoint, at its origin, and for its organization at that origin.
  open_slots as (
    select e.id, candidate.organization_id, candidate.organization_held, candidate.organization_free, e.origin, free.free,
      e.throttle_per_second is not null as throttled,
      count(*) over (partition by candidate.organization_id) as siblings, free.origin_free, free.organization_origin_free
    from candidates candidate cross join params join webhook_endpoints e on e.id = candidate.endpoint_id
    left join held on held.endpoint_id = e.id
    left join origin_held on origin_held.origin = e.origin
    left join organization_origin_held on organization_origin_held.organization_id = candidate.organization_id
      and organization_origin_held.origin = e.origin
    -- A throttled endpoint's bucket, its row locked (skipped while another claim holds it, so two claims never spend
    -- one token; `no key update` leaves the deliveries' inserts, whose key checks take `key share`, unblocked): as
    -- many deliveries as its tokens, one second's deliveries when full. Not read at all for an endpoint without one.
    left join lateral (
      select t.throttle_per_second,
        (t.throttle_per_second - ceil(coalesce(greatest(0, extract(epoch from t.throttle_next_at - params.now_at)), 0)
          * t.throttle_per_second - 0.0001))::int as tokens
      from webhook_endpoints t where t.id = e.id and e.throttle_per_second is not null and t.throttle_per_second is not null
      for no key update of t skip locked
    ) bucket on true
    cross join lateral (
      select least(case when e.circuit_open_until is null then params.share else 1 end - coalesce(held.in_flight, 0),
          case when e.throttle_per_second is not null then coalesce(bucket.tokens, 0) end) as free,
        params.origin_connections - coalesce(origin_held.in_flight, 0) as origin_free,
        params.origin_share - coalesce(organization_origin_held.in_flight, 0) as organization_origin_free
    ) free
    -- One probe of the due index per endpoint (a lateral with a limit is never flattened, and its
    -- order is the index's within one endpoint): as an EXISTS, a generic plan may hash-join every
    -- pending delivery.
    cross join lateral (
      select d.id from webhook_deliveries d where d.organization_id = candidate.organization_id and d.endpoint_id = e.id and d.status = 'pending' and not d.via_listener and d.created_at <= now()
        and d.next_attempt_at <= now() and (d.lease_expires_at is null or d.lease_expires_at < now())
        and (d.attempts > 0 or d.next_attempt_at <= now() - params.first_try_delay_ms * interval '1 millisecond')
      order by d.next_attempt_at, d.id limit 1
    ) due
    where e.enabled and (e.circuit_open_until is null or e.circuit_open_until <= params.now_at)
      and (e.throttle_per_second is null or bucket.throttle_per_second is not null)
      and free.free > 0 and free.origin_free > 0 and free.organization_origin_free > 0
  ),
  -- An equal part of twice the claim per organization with open slots.
  share as (
    select greatest(1, ceil(2.0 * params.claim_limit / greatest(1, count(distinct open_slots.organization_id))))::int as per_organization
    from params left join open_slots on true group by params.claim_limit
  ),
  -- Per endpoint, its oldest due deliveries within its free slots and its part of its organization's, locked (skipping rows another claim holds).
  locked as (
    select due.id, slot.id as endpoint_id, slot.throttled, slot.organization_id, slot.organization_held, slot.organization_free, slot.origin,
      slot.origin_free, slot.organization_origin_free, due.next_attempt_at, due.created_at
    from open_slots slot cross join share cross join params
    cross join lateral (
      select d.id, d.next_attempt_at, d.created_at
      from webhook_deliveries d
      where d.organization_id = slot.organization_id and d.endpoint_id = slot.id and d.status = 'pending' and not d.via_listener and d.created_at <= now()
        and d.next_attempt_at <= now() and (d.lease_expires_at is null or d.lease_expires_at < now())
        and (d.attempts > 0 or d.next_attempt_at <= now() - params.first_try_delay_ms * interval '1 millisecond')
      order by d.next_attempt_at, d.id
      limit least(slot.free, slot.origin_free, slot.organization_origin_free,
        ceil(least(share.per_organization, slot.organization_free)::numeric / slot.siblings)::int)
      for update of d skip locked
    ) due
  ),
  -- Each locked delivery's turn within its endpoint.
  ranked as (
    select id, endpoint_id, throttled, organization_id, organization_held, organization_free, origin, origin_free, organization_origin_free,
      next_attempt_at, created_at, row_number() over (partition by endpoint_id order by next_attempt_at, id) as rank_in_endpoint
    from locked
  ),
  -- Its turn within its organization: the endpoints' first ones first.
  turns as (
    select id, endpoint_id, throttled, organization_id, next_attempt_at, created_at, rank_in_endpoint, organization_held, organization_free, origin,
      origin_free, organization_origin_free,
      row_number() over (partition by organization_id order by rank_in_endpoint, next_attempt_at, id) as rank_in_organization
    from ranked
  ),
  -- Organizations take turns (those holding fewer first), within their free slots, their origins' and their share of each origin's.
  picked as materialized (
    select id, endpoint_id, throttled, created_at from (
      select id, endpoint_id, throttled, next_attempt_at, created_at, rank_in_endpoint, rank_in_organization, organization_held,
        row_number() over (partition by origin
          order by organization_held + rank_in_organization, rank_in_endpoint, next_attempt_at, id) as rank_in_origin,
        row_number() over (partition by organization_id, origin order by rank_in_organization) as rank_at_origin,
        origin_free, organization_origin_free
      from turns where rank_in_organization <= organization_free
    ) fitting
    where rank_in_origin <= origin_free and rank_at_origin <= organization_origin_free
    order by organization_held + rank_in_organization, rank_in_endpoint, next_attempt_at, id
    limit (select claim_limit from params)
  ),
  -- Each throttled endpoint's bucket spent by what was picked for it (its row locked above): one interval a delivery.
  throttle_spent as (
    update webhook_endpoints e
      set throttle_next_at = greatest(e.throttle_next_at, params.now_at) + interval '1 second' * spent.deliveries / e.throttle_per_second
    from (select endpoint_id, count(*)::int as deliveries from picked where throttled group by endpoint_id) spent, params
    where e.id = spent.endpoint_id and e.throttle_per_second is not null
  )
-- The picked deliveries leased, returned with what sending them needs.
update webhook_deliveries d
  set lease_token = gen_random_uuid(), lease_expires_at = (now() + params.lease_ms * interval '1 millisecond')
from webhook_endpoints e, webhook_messages m, params
where d.id = any(array(select id from picked))
  -- The picked deliveries' times as a range: pruned at run time to the partitions they span (the locked rows' created_at, read with them).
  and d.created_at between (select min(created_at) from picked) and (select max(created_at) from picked)
  and e.id = d.endpoint_id and m.id = d.message_id and m.created_at = d.created_at
returning d.id, d.organization_id, d.endpoint_id, e.url, e.origin, e.secret,
  case when e.previous_secret_until > params.now_at then e.previous_secret end as previous_secret,
  m.envelope_id, m.type, to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at, m.payload, d.attempts + 1 as attempt, d.lease_token,
  e.circuit_open_until is not null as probe, m.traceparent
