import {
  type DeliveryPolicy, type DueDelivery, endpointSecretContext, envelopeBody, firstAttemptDelayMs, type HeldSlots,
} from "@platter/domain";
import { Result } from "effect";
import { isoTimestamp } from "../keyset-page.ts";
import { openEndpointSecrets, type OpenedSecrets } from "./opened-secrets.ts";
import { takeLease, unleased } from "./lease.ts";

/**
 * The dispatcher's fair claim: which due deliveries a dispatcher leases next (see `DeliveryPolicy`),
 * and how long an idle one may sleep before one is due.
 */

/** A claimed delivery as the claim returns it. */
export interface ClaimedRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  url: string;
  origin: string;
  secret: string;
  previous_secret: string | null;
  envelope_id: string;
  type: string;
  created_at: string;
  payload: unknown;
  attempt: number;
  lease_token: string;
  probe: boolean;
  traceparent: string | null;
}

/** Postgres array literal of integers, passed as one bound string. */
export const bigintArray = (ids: ReadonlyArray<string | number>): string => `{${ids.join(",")}}`;

/**
 * A delivery this queue sends: pending, and not a local listener's (`platter listen` forwards those;
 * the due index leaves them out). Every statement here finds deliveries through it.
 */
export const DISPATCHABLE = (d: string) => `${d}.status = 'pending' and not ${d}.via_listener`;

/**
 * A delivery made by now (`created_at`, its message's transaction's start, is never later than this
 * statement's `now()` but for one committed in the instant between the two, which the next claim finds):
 * PostgreSQL prunes the partitions made ahead at run time, so a descent of the due index reads only the
 * partitions that can hold a delivery. Without it each descent also read every empty partition ahead
 * (8 of 39 at 1-day partitions, 120 of 125 at 1-minute ones), one block each.
 */
export const MADE_BY_NOW = (d: string) => `${d}.created_at <= now()`;

/**
 * One index descent into the due index: the first `column` value of pending deliveries (of those
 * in `scope`) matching `bound`, in `order` (which names the due index's columns, so no other index
 * can serve it).
 */
const PENDING = (column: string, scope: string, bound: string, order: string) =>
  `(select d.${column} from webhook_deliveries d where ${DISPATCHABLE("d")} and ${MADE_BY_NOW("d")}${scope} and ${bound} order by ${order} limit 1)`;

/**
 * The descending orders of the due index (organization, endpoint, …) that walk organizations, and
 * one organization's endpoints. A walk descends: it lands at the end of a range, on its newest
 * deliveries, and never steps over the entries of deliveries already done (the oldest, at the start
 * of each endpoint's range, until VACUUM removes them).
 */
const BY_ORGANIZATION = "d.organization_id desc, d.endpoint_id desc, d.next_attempt_at desc";
const BY_ENDPOINT = "d.endpoint_id desc, d.next_attempt_at desc";

/**
 * The ascending orders, for the one ascending descent of each walk: the lowest value with pending
 * deliveries, so the walk's random start is drawn between the lowest and the highest of those
 * (drawn from every organization's or endpoint's id, the ones above the highest with work would
 * always be first).
 */
const BY_ORGANIZATION_UP = "d.organization_id, d.endpoint_id, d.next_attempt_at";
const BY_ENDPOINT_UP = "d.endpoint_id, d.next_attempt_at";

/** One index descent: the first `column` value (of those in `scope`) matching `bound`, in `order`. */
export type IndexDescent = (column: string, scope: string, bound: string, order: string) => string;

/**
 * A walk over the distinct `column` values an index holds (in `scope`), one index descent each (a
 * loose index scan, `descent`): from `start` downwards, then wrapping around to the values above
 * it, at most `budget` of them. Its rows: `id`.
 */
export const indexWalk = (descent: IndexDescent) =>
  (name: string, column: string, scope: string, order: string, start: string, budget: string) => `${name}(id, wrapped, visited) as (
    -- The first value: the highest at or below the start, else (wrapped) the highest above it.
    select first_step.id, first_step.wrapped, 1 from (
      select coalesce(below.found, ${descent(column, scope, `d.${column} > ${start}`, order)}) as id, below.found is null as wrapped
      from (select ${descent(column, scope, `d.${column} <= ${start}`, order)} as found offset 0) below
      offset 0
    ) first_step where first_step.id is not null
    union all
    -- Each next value: the highest below the last one (above the start once wrapped), wrapping once, within the budget.
    select next_step.id, next_step.wrapped, walked.visited + 1 from ${name} walked cross join lateral (
      select coalesce(below.found, case when not walked.wrapped then ${descent(column, scope, `d.${column} > ${start}`, order)} end) as id,
        walked.wrapped or below.found is null as wrapped
      from (select ${descent(column, scope, `d.${column} < walked.id and (not walked.wrapped or d.${column} > ${start})`, order)} as found offset 0) below
      offset 0
    ) next_step where next_step.id is not null and walked.visited < ${budget}
  )`;

/** The walk over pending deliveries (the due index). */
const WALK = indexWalk(PENDING);

/** The largest id: a walk starting there visits every value once. */
const ALL = "9223372036854775807";

/** Every endpoint with pending deliveries (`endpoint_id`), organization by organization: for the idle dispatcher's one look ahead. */
export const ACTIVE_ENDPOINTS = `${WALK("every_organization", "organization_id", "", BY_ORGANIZATION, ALL, ALL)},
  active(endpoint_id) as (
    select walked_endpoint.id from every_organization cross join lateral (
      with recursive ${WALK("every_endpoint", "endpoint_id", " and d.organization_id = every_organization.id", BY_ENDPOINT, ALL, ALL)}
      select id from every_endpoint
    ) walked_endpoint
  )`;

/**
 * In a claim: a delivery of this endpoint that may be tried now (due, nobody holding it, and past
 * the first try's delay); `params` is the claim's parameters.
 */
const DUE = (d: string, organization: string, endpoint: string) =>
  `${d}.organization_id = ${organization} and ${d}.endpoint_id = ${endpoint} and ${DISPATCHABLE(d)} and ${MADE_BY_NOW(d)}
        and ${d}.next_attempt_at <= now() and ${unleased(d)}
        and (${d}.attempts > 0 or ${d}.next_attempt_at <= now() - params.first_try_delay_ms * interval '1 millisecond')`;

/**
 * A claim reads and locks rows in proportion to the slots it can fill, never to the organizations
 * or endpoints with work. It walks the due index (organization, then endpoint) downwards, so its
 * steps land on ranges' newest entries: organizations with pending deliveries from a random one,
 * wrapping around, as many as the claim has slots (plus those at their share, which are skipped,
 * and as many as endpoints at their cap); within each, its endpoints from a random one, as many as
 * the organization may still fill of the claim (plus its endpoints at their cap here). Over
 * successive claims every organization and endpoint gets its turn, whatever their number.
 *
 * Of those, the endpoints with a delivery that may be tried now that this dispatcher may send to
 * (enabled, circuit not open), with its free slots at each: its share of the cap less what it has
 * in flight there (one probe while half-open). An origin's deliveries are claimed only while this
 * dispatcher has connections to it free, so no attempt waits inside the HTTP client holding a
 * slot, and one organization holds at most its share of those connections (`originShare`), the
 * rest kept for others there. An endpoint its organization throttled takes no more than its bucket's
 * tokens (on its row, locked by the claim; a claim that finds it locked leaves it to the other), and
 * the claim spends them for what it leases there: one throttle across every dispatcher, as the cap.
 * Each organization may lock twice an equal part of the claim (never
 * more than its share leaves free), split between its endpoints (oldest due first, skipping rows
 * another claim holds): one with less room than an equal part leaves the rest to the others, so
 * the claim fills, and the rows locked stay within twice the claim. Then organizations take turns
 * counting the slots each already holds (those holding fewer first), within one its endpoints, and
 * at a shared origin the same turns. The lease columns are not indexed, so the claim's update is a
 * HOT update.
 *
 * Parameters: share, organization share, origin connections, origin share, limit, first-try delay ms,
 * organizations to walk, lease ms; held per endpoint, per organization, per origin (jsonb). Its full
 * text as PostgreSQL runs it: `test/__snapshots__/statements/delivery-claim.sql`.
 */
export const CLAIM = `with recursive
  -- The claim's numbers, and its one random turn.
  params as materialized (
    -- now() once, behind the materialized CTE: the planner then estimates the circuit test as it did
    -- a bound time; written as now() there, it chose a plan reading 20,100 rows per claim at 100
    -- endpoints (bench:webhooks, many-endpoints) against 1,846.
    select ?::int as share, now() as now_at, ?::int as organization_share, ?::int as origin_connections,
      ?::int as origin_share, ?::int as claim_limit, ?::int as first_try_delay_ms, ?::int as organization_budget, ?::int as lease_ms,
      random() as turn
  ),
  -- What this dispatcher has in flight: per endpoint, per organization, per origin.
  held as (select * from jsonb_to_recordset(?::jsonb) as held(endpoint_id bigint, in_flight int)),
  organization_held as (select * from jsonb_to_recordset(?::jsonb) as organization_held(organization_id bigint, in_flight int)),
  origin_held as (select * from jsonb_to_recordset(?::jsonb) as origin_held(origin text, in_flight int)),
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
      (select ${PENDING("organization_id", "", "true", BY_ORGANIZATION_UP)} as lo, ${PENDING("organization_id", "", "true", BY_ORGANIZATION)} as hi) bounds
  ),
  -- The organizations with pending deliveries, walked from there.
  ${WALK("organization_walk", "organization_id", "", BY_ORGANIZATION, "(select start from organization_range)", "(select budget from organization_range)")},
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
      from (select ${PENDING("endpoint_id", " and d.organization_id = organization.organization_id", "true", BY_ENDPOINT_UP)} as lo,
                   ${PENDING("endpoint_id", " and d.organization_id = organization.organization_id", "true", BY_ENDPOINT)} as hi offset 0) bounds
      offset 0
    ) endpoint_range
    cross join lateral (
      with recursive ${WALK("endpoint_walk", "endpoint_id", " and d.organization_id = organization.organization_id", BY_ENDPOINT, "endpoint_range.start", "endpoint_range.budget")}
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
    -- one token; \`no key update\` leaves the deliveries' inserts, whose key checks take \`key share\`, unblocked): as
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
      select d.id from webhook_deliveries d where ${DUE("d", "candidate.organization_id", "e.id")}
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
      where ${DUE("d", "slot.organization_id", "slot.id")}
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
  set ${takeLease("params.lease_ms")}
from webhook_endpoints e, webhook_messages m, params
where d.id = any(array(select id from picked))
  -- The picked deliveries' times as a range: pruned at run time to the partitions they span (the locked rows' created_at, read with them).
  and d.created_at between (select min(created_at) from picked) and (select max(created_at) from picked)
  and e.id = d.endpoint_id and m.id = d.message_id and m.created_at = d.created_at
returning d.id, d.organization_id, d.endpoint_id, e.url, e.origin, e.secret,
  case when e.previous_secret_until > params.now_at then e.previous_secret end as previous_secret,
  m.envelope_id, m.type, ${isoTimestamp("m.created_at")} as created_at, m.payload, d.attempts + 1 as attempt, d.lease_token,
  e.circuit_open_until is not null as probe, m.traceparent`;

/** Attempts in flight per key, as the claim's jsonb: `[{ <keyName>: key, in_flight: n }, …]`. */
export const inFlightJson = <Key>(counts: ReadonlyMap<Key, number>, keyName: string): string =>
  JSON.stringify([...counts].filter(([, n]) => n > 0).map(([key, in_flight]) => ({ [keyName]: key, in_flight })));

/** The claim statement (`CLAIM`) and its parameters; exported for the tests that read its plan. */
export const claimStatement = (limit: number, leaseMs: number, policy: DeliveryPolicy, held: HeldSlots) => {
  // Organizations at their share, and those whose one endpoint with work is at its cap here, are
  // walked past: they do not count against the walk.
  const atShare = [...held.inFlightByOrganization.values()].filter((n) => n >= held.organizationShare).length;
  const atCap = [...held.inFlight.values()].filter((n) => n >= held.share).length;
  return {
    text: CLAIM,
    values: [
      held.share, held.organizationShare, held.originConnections, held.originShare, limit, firstAttemptDelayMs(policy),
      limit + atShare + atCap, leaseMs, inFlightJson(held.inFlight, "endpoint_id"),
      inFlightJson(held.inFlightByOrganization, "organization_id"), inFlightJson(held.inFlightByOrigin, "origin"),
    ],
  };
};

/** The claimed rows as deliveries to send: secrets opened, bodies built; unreadable and unopened ones set apart. */
export const toDue = (
  rows: ReadonlyArray<ClaimedRow>, secrets: OpenedSecrets,
): { due: DueDelivery[]; unreadable: DueDelivery[]; unopened: number } => {
  const due: DueDelivery[] = [];
  const unreadable: DueDelivery[] = [];
  let unopened = 0;
  for (const row of rows) {
    // Stored sealed for the endpoint's row; opened once per stored value (`openedSecrets`).
    const context = endpointSecretContext(row.organization_id, row.endpoint_id);
    const opened = openEndpointSecrets(secrets, row, context);
    if (Result.isFailure(opened)) {
      // A key this process lacks: the delivery stays leased and unsent (back when its lease ends, for a
      // process holding the key); one such row never stops the rest of the claim.
      unopened++;
      continue;
    }
    const { secret, previousSecret } = opened.success;
    const body = envelopeBody({ envelopeId: row.envelope_id, type: row.type, createdAt: row.created_at, payload: row.payload });
    const delivery = {
      id: Number(row.id),
      organizationId: Number(row.organization_id),
      endpointId: Number(row.endpoint_id),
      url: row.url,
      origin: row.origin,
      secret,
      previousSecret,
      envelopeId: row.envelope_id,
      body: body ?? "",
      attempt: row.attempt,
      leaseToken: row.lease_token,
      probe: row.probe,
      traceparent: row.traceparent,
      createdAt: row.created_at,
    };
    (body === undefined ? unreadable : due).push(delivery);
  }
  return { due, unreadable, unopened };
};

/**
 * For a dispatcher with nothing in flight, milliseconds until a claim may find something: per
 * endpoint, its earliest delivery nobody holds (plus the first-try delay when it was never tried;
 * not before its throttle's bucket has a token), or an open circuit's end. Leases of a dispatcher that died run out unseen: the poll interval
 * covers them. Parameter: first-try delay ms.
 */
export const NEXT_DUE = `with recursive ${ACTIVE_ENDPOINTS}
  select extract(epoch from (min(case when e.circuit_open_until > now() then e.circuit_open_until
      else greatest(first.next_attempt_at + case when first.attempts = 0 then ?::int * interval '1 millisecond' else interval '0' end,
        -- A throttled endpoint's bucket has a token again one interval less than a bucket's worth before its arrival time.
        e.throttle_next_at - interval '1 second' * (e.throttle_per_second - 1) / e.throttle_per_second) end) - now())) * 1000 as ms
  from active a join webhook_endpoints e on e.id = a.endpoint_id and e.enabled
  cross join lateral (select d.next_attempt_at, d.attempts from webhook_deliveries d
    where d.organization_id = e.organization_id and d.endpoint_id = e.id and ${DISPATCHABLE("d")} and ${MADE_BY_NOW("d")} and ${unleased("d")}
    order by d.next_attempt_at, d.id limit 1) first`;

/** `NEXT_DUE`'s parameters under `policy`. */
export const nextDueValues = (policy: DeliveryPolicy): ReadonlyArray<unknown> => [firstAttemptDelayMs(policy)];
