import {
  ATTEMPT_TEXT_MAX_CHARACTERS, type AttemptRecord, type CircuitState, circuitState, DEFAULT_DISABLE_NOTICE_MS, DISABLED_FAILING, DISABLED_GONE, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, endpointOrigin, endpointSecretContext, envelopeBody,
  firstAttemptDelayMs, type HeldSlots, type NoticeKind, operationalEnvelopeBody, retryDelayAfter, SETTLED_ENDPOINT_DISABLED,
  storableTextOrNull,
} from "@platter/domain";
import { Context, Effect, Layer, Result } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type DeliveryListener, listenForDeliveries } from "./delivery-listener.ts";
import { openEndpointSecrets, type OpenedSecrets, openedSecrets } from "./opened-secrets.ts";

/**
 * The delivery queue: the dispatcher's storage. Fair leased claims (see `DeliveryPolicy`) and
 * batched result writes (one transaction for many attempts keeps throughput high).
 *
 * Row writes per delivery: its insert (in the transaction that records the message), the claim's
 * update (a HOT one: the lease columns are not indexed), the attempt's insert and the result's
 * update. Endpoints are written only when their state changes (a failure, the first success after
 * failures). Every statement goes straight to the pool (`Database.rows`), one round trip each.
 *
 * The one system-level store: a dispatcher serves every organization, so these statements work
 * across organizations by design, carrying each row's own organization along. It is not part of
 * the API's runtime, and it reads no organization data for anyone.
 */

interface ClaimedRow {
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
}

/** One endpoint's share of the queue, for the per-endpoint gauges. */
export interface EndpointQueueStats {
  readonly organizationId: number;
  readonly endpointId: number;
  /** Pending deliveries, in flight included. */
  readonly queueDepth: number;
  readonly inFlight: number;
  readonly circuit: CircuitState;
}

/** Postgres array literal of integers, passed as one bound string. */
export const bigintArray = (ids: ReadonlyArray<string | number>): string => `{${ids.join(",")}}`;

/**
 * A delivery this queue sends: pending, and not a local listener's (`platter listen` forwards those;
 * the due index leaves them out). Every statement here finds deliveries through it.
 */
const DISPATCHABLE = (d: string) => `${d}.status = 'pending' and not ${d}.via_listener`;

/**
 * One index descent into the due index: the first `column` value of pending deliveries (of those
 * in `scope`) matching `bound`, in `order` (which names the due index's columns, so no other index
 * can serve it).
 */
const PENDING = (column: string, scope: string, bound: string, order: string) =>
  `(select d.${column} from webhook_deliveries d where ${DISPATCHABLE("d")}${scope} and ${bound} order by ${order} limit 1)`;

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

/**
 * A walk over the distinct `column` values of pending deliveries (in `scope`), one index descent
 * each (a loose index scan of the due index): from `start` downwards, then wrapping around to the
 * values above it, at most `budget` of them. Its rows: `id`.
 */
const WALK = (name: string, column: string, scope: string, order: string, start: string, budget: string) => `${name}(id, wrapped, n) as (
    select x.id, x.wrapped, 1 from (
      select coalesce(f.a, ${PENDING(column, scope, `d.${column} > ${start}`, order)}) as id, f.a is null as wrapped
      from (select ${PENDING(column, scope, `d.${column} <= ${start}`, order)} as a offset 0) f
      offset 0
    ) x where x.id is not null
    union all
    select x.id, x.wrapped, w.n + 1 from ${name} w cross join lateral (
      select coalesce(f.a, case when not w.wrapped then ${PENDING(column, scope, `d.${column} > ${start}`, order)} end) as id,
        w.wrapped or f.a is null as wrapped
      from (select ${PENDING(column, scope, `d.${column} < w.id and (not w.wrapped or d.${column} > ${start})`, order)} as a offset 0) f
      offset 0
    ) x where x.id is not null and w.n < ${budget}
  )`;

/** The largest id: a walk starting there visits every value once. */
const ALL = "9223372036854775807";

/** Every endpoint with pending deliveries (`endpoint_id`), organization by organization: for the idle dispatcher's one look ahead. */
const ACTIVE_ENDPOINTS = `${WALK("every_organization", "organization_id", "", BY_ORGANIZATION, ALL, ALL)},
  active(endpoint_id) as (
    select ew.id from every_organization o cross join lateral (
      with recursive ${WALK("every_endpoint", "endpoint_id", " and d.organization_id = o.id", BY_ENDPOINT, ALL, ALL)}
      select id from every_endpoint
    ) ew
  )`;

/** A pending delivery nobody holds a live lease on. */
const UNLEASED = (d: string) => `(${d}.lease_expires_at is null or ${d}.lease_expires_at < now())`;

/**
 * In a claim: a delivery of this endpoint that may be tried now (due, nobody holding it, and past
 * the first try's delay); `p` is the claim's parameters.
 */
const DUE = (d: string, organization: string, endpoint: string) =>
  `${d}.organization_id = ${organization} and ${d}.endpoint_id = ${endpoint} and ${DISPATCHABLE(d)}
        and ${d}.next_attempt_at <= now() and ${UNLEASED(d)}
        and (${d}.attempts > 0 or ${d}.next_attempt_at <= now() - p.first_try_delay_ms * interval '1 millisecond')`;

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
 * rest kept for others there. Each organization may lock twice an equal part of the claim (never
 * more than its share leaves free), split between its endpoints (oldest due first, skipping rows
 * another claim holds): one with less room than an equal part leaves the rest to the others, so
 * the claim fills, and the rows locked stay within twice the claim. Then organizations take turns
 * counting the slots each already holds (those holding fewer first), within one its endpoints, and
 * at a shared origin the same turns. The lease columns are not indexed, so the claim's update is a
 * HOT update.
 *
 * Parameters: share, organization share, origin connections, origin share, limit, first-try delay ms,
 * organizations to walk, lease ms; held per endpoint, per organization, per origin (jsonb).
 */
const CLAIM = `with recursive
  params as materialized (
    -- now() once, behind the materialized CTE: the planner then estimates the circuit test as it did
    -- a bound time; written as now() there, it chose a plan reading 20,100 rows per claim at 100
    -- endpoints (bench:webhooks, many-endpoints) against 1,846.
    select ?::int as share, now() as now_at, ?::int as organization_share, ?::int as origin_connections,
      ?::int as origin_share, ?::int as claim_limit, ?::int as first_try_delay_ms, ?::int as organization_budget, ?::int as lease_ms,
      random() as turn
  ),
  held as (select * from jsonb_to_recordset(?::jsonb) as h(endpoint_id bigint, in_flight int)),
  organization_held as (select * from jsonb_to_recordset(?::jsonb) as oh(organization_id bigint, in_flight int)),
  origin_held as (select * from jsonb_to_recordset(?::jsonb) as gh(origin text, in_flight int)),
  held_endpoints as materialized (
    select h.endpoint_id, h.in_flight, e.organization_id, e.origin from held h join webhook_endpoints e on e.id = h.endpoint_id
  ),
  organization_origin_held as (
    select organization_id, origin, sum(in_flight)::int as in_flight from held_endpoints group by organization_id, origin
  ),
  organization_range as materialized (
    select r.lo + floor(p.turn * (r.hi - r.lo + 1))::bigint as start, p.organization_budget as budget
    from params p,
      (select ${PENDING("organization_id", "", "true", BY_ORGANIZATION_UP)} as lo, ${PENDING("organization_id", "", "true", BY_ORGANIZATION)} as hi) r
  ),
  ${WALK("organization_walk", "organization_id", "", BY_ORGANIZATION, "(select start from organization_range)", "(select budget from organization_range)")},
  walked_organizations as (
    select w.id as organization_id, coalesce(oh.in_flight, 0) as organization_held,
      p.organization_share - coalesce(oh.in_flight, 0) as organization_free, count(*) over () as organizations
    from organization_walk w cross join params p left join organization_held oh on oh.organization_id = w.id
    where p.organization_share - coalesce(oh.in_flight, 0) > 0
  ),
  at_cap as (
    select h.organization_id, count(*)::int as endpoints
    from held_endpoints h cross join params p where h.in_flight >= p.share group by h.organization_id
  ),
  candidates as (
    select o.organization_id, o.organization_held, o.organization_free, ew.id as endpoint_id
    from walked_organizations o cross join params p left join at_cap c on c.organization_id = o.organization_id
    cross join lateral (
      select r.lo + floor(p.turn * (r.hi - r.lo + 1))::bigint as start,
        least(o.organization_free, greatest(1, ceil(2.0 * p.claim_limit / o.organizations)))::int + coalesce(c.endpoints, 0) as budget
      from (select ${PENDING("endpoint_id", " and d.organization_id = o.organization_id", "true", BY_ENDPOINT_UP)} as lo,
                   ${PENDING("endpoint_id", " and d.organization_id = o.organization_id", "true", BY_ENDPOINT)} as hi offset 0) r
      offset 0
    ) er
    cross join lateral (
      with recursive ${WALK("endpoint_walk", "endpoint_id", " and d.organization_id = o.organization_id", BY_ENDPOINT, "er.start", "er.budget")}
      select id from endpoint_walk
    ) ew
  ),
  open_slots as (
    select e.id, c.organization_id, c.organization_held, c.organization_free, e.origin, x.free,
      count(*) over (partition by c.organization_id) as siblings, x.origin_free, x.organization_origin_free
    from candidates c cross join params p join webhook_endpoints e on e.id = c.endpoint_id
    left join held h on h.endpoint_id = e.id
    left join origin_held gh on gh.origin = e.origin
    left join organization_origin_held ogh on ogh.organization_id = c.organization_id and ogh.origin = e.origin
    cross join lateral (
      select case when e.circuit_open_until is null then p.share else 1 end - coalesce(h.in_flight, 0) as free,
        p.origin_connections - coalesce(gh.in_flight, 0) as origin_free,
        p.origin_share - coalesce(ogh.in_flight, 0) as organization_origin_free
    ) x
    -- One probe of the due index per endpoint (a lateral with a limit is never flattened, and its
    -- order is the index's within one endpoint): as an EXISTS, a generic plan may hash-join every
    -- pending delivery.
    cross join lateral (
      select d.id from webhook_deliveries d where ${DUE("d", "c.organization_id", "e.id")}
      order by d.next_attempt_at, d.id limit 1
    ) due
    where e.enabled and (e.circuit_open_until is null or e.circuit_open_until <= p.now_at)
      and x.free > 0 and x.origin_free > 0 and x.organization_origin_free > 0
  ),
  share as (
    select greatest(1, ceil(2.0 * p.claim_limit / greatest(1, count(distinct o.organization_id))))::int as per_organization
    from params p left join open_slots o on true group by p.claim_limit
  ),
  locked as (
    select c.id, o.id as endpoint_id, o.organization_id, o.organization_held, o.organization_free, o.origin, o.origin_free,
      o.organization_origin_free, c.next_attempt_at
    from open_slots o cross join share cross join params p
    cross join lateral (
      select d.id, d.next_attempt_at
      from webhook_deliveries d
      where ${DUE("d", "o.organization_id", "o.id")}
      order by d.next_attempt_at, d.id
      limit least(o.free, o.origin_free, o.organization_origin_free,
        ceil(least(share.per_organization, o.organization_free)::numeric / o.siblings)::int)
      for update of d skip locked
    ) c
  ),
  ranked as (
    select id, organization_id, organization_held, organization_free, origin, origin_free, organization_origin_free,
      next_attempt_at, row_number() over (partition by endpoint_id order by next_attempt_at, id) as rank_in_endpoint
    from locked
  ),
  turns as (
    select id, organization_id, next_attempt_at, rank_in_endpoint, organization_held, organization_free, origin, origin_free,
      organization_origin_free,
      row_number() over (partition by organization_id order by rank_in_endpoint, next_attempt_at, id) as rank_in_organization
    from ranked
  ),
  picked as (
    select id from (
      select id, next_attempt_at, rank_in_endpoint, rank_in_organization, organization_held,
        row_number() over (partition by origin
          order by organization_held + rank_in_organization, rank_in_endpoint, next_attempt_at, id) as rank_in_origin,
        row_number() over (partition by organization_id, origin order by rank_in_organization) as rank_at_origin,
        origin_free, organization_origin_free
      from turns where rank_in_organization <= organization_free
    ) fitting
    where rank_in_origin <= origin_free and rank_at_origin <= organization_origin_free
    order by organization_held + rank_in_organization, rank_in_endpoint, next_attempt_at, id
    limit (select claim_limit from params)
  )
  update webhook_deliveries d
    set lease_token = gen_random_uuid(), lease_expires_at = now() + p.lease_ms * interval '1 millisecond'
  from webhook_endpoints e, webhook_messages m, params p
  where d.id = any(array(select id from picked)) and e.id = d.endpoint_id and m.id = d.message_id
  returning d.id, d.organization_id, d.endpoint_id, e.url, e.origin, e.secret,
    case when e.previous_secret_until > p.now_at then e.previous_secret end as previous_secret,
    m.envelope_id, m.type, ${isoTimestamp("m.created_at")} as created_at, m.payload, d.attempts + 1 as attempt, d.lease_token,
    e.circuit_open_until is not null as probe`;

/** Attempts in flight per key, as the claim's jsonb: `[{ <keyName>: key, in_flight: n }, …]`. */
const inFlightJson = <Key>(counts: ReadonlyMap<Key, number>, keyName: string): string =>
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

const toDue = (
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
    };
    (body === undefined ? unreadable : due).push(delivery);
  }
  return { due, unreadable, unopened };
};

const RESULT_COLUMNS = `r(delivery_id bigint, organization_id bigint, endpoint_id bigint, lease_token uuid, attempt int,
  started_ms_ago bigint, duration_ms int, status_code int, error text, response_body text, outcome text,
  retry_delay_ms bigint)`;

/** jsonb (and text) cannot hold NUL: a receiver's bytes (or an error naming its host) must never make a result unwritable, nor unbounded. */
const storable = (text: string | undefined): string | null => storableTextOrNull(text, ATTEMPT_TEXT_MAX_CHARACTERS);

/** One result as the statement reads it, with the retry schedule's delay for its try (none when not retried). */
const toResultRow = (r: AttemptRecord, policy: DeliveryPolicy) => ({
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
  lease_token = null, lease_expires_at = null`;

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
      lease_token = null, lease_expires_at = null
    from r left join off z on z.id = r.endpoint_id
    where d.id = r.delivery_id and d.lease_token = r.lease_token
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

/** The operator's channel for operational webhooks: where they go and the Standard Webhooks secret that signs them. */
export interface OperatorChannel {
  readonly url: string;
  readonly secret: string;
}

interface NoticeRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  envelope_id: string;
  kind: NoticeKind;
  reason: string;
  endpoint_url: string;
  at: string;
  disables_at: string | null;
  attempt: number;
  lease_token: string;
}

/**
 * The operator channel's claim: due notices nobody holds, organizations taking turns (each one's
 * oldest first, then each one's second…) among the oldest `window` due, and no organization past its
 * share of this channel's slots (`held`), so a tenant whose endpoints all fail cannot hold the
 * channel. Parameters: limit, window, lease ms, organization share, held per organization (jsonb).
 */
const CLAIM_NOTICES = `with p as materialized (select ?::int as claim_limit, ?::int as candidates, ?::int as lease_ms, ?::int as organization_share),
  organization_held as (select * from jsonb_to_recordset(?::jsonb) as oh(organization_id bigint, in_flight int)),
  due as (
    select n.id, n.organization_id, n.operator_next_attempt_at from endpoint_notices n
    where n.operator_status = 'pending' and n.operator_next_attempt_at <= now() and ${UNLEASED("n")}
    order by n.operator_next_attempt_at, n.id limit (select candidates from p)
  ),
  turns as (
    select d.id, d.operator_next_attempt_at, coalesce(oh.in_flight, 0) as held,
      row_number() over (partition by d.organization_id order by d.operator_next_attempt_at, d.id) as turn
    from due d left join organization_held oh on oh.organization_id = d.organization_id
  ),
  picked as (
    select t.id from turns t cross join p where t.held + t.turn <= p.organization_share
    order by t.held + t.turn, t.operator_next_attempt_at, t.id limit (select claim_limit from p)
  )
  -- Checked again on the row the update finds: a notice another dispatcher leased meanwhile is left to it.
  update endpoint_notices n set lease_token = gen_random_uuid(), lease_expires_at = now() + p.lease_ms * interval '1 millisecond'
  from p where n.id in (select id from picked) and n.operator_status = 'pending' and ${UNLEASED("n")}
  returning n.id, n.organization_id, n.endpoint_id, n.envelope_id, n.kind, n.reason, n.endpoint_url, ${isoTimestamp("n.created_at")} as at,
    ${isoTimestamp("n.disables_at")} as disables_at, n.operator_attempts + 1 as attempt, n.lease_token`;

/**
 * The operator channel's results, as `RECORD` moves a delivery (`deliveryAfterAttempt`, by the lease
 * holder only): done, retried after the schedule's delay, or failed for good; the last answer kept.
 */
const RECORD_NOTICES = `with r as (select * from jsonb_to_recordset(?::jsonb) as ${RESULT_COLUMNS})
  update endpoint_notices n set
    operator_status = case when r.outcome = 'succeeded' then 'succeeded' when r.retry_delay_ms is null then 'failed' else 'pending' end,
    operator_attempts = greatest(n.operator_attempts, r.attempt),
    operator_next_attempt_at = coalesce(now() + r.retry_delay_ms * interval '1 millisecond', n.operator_next_attempt_at),
    operator_completed_at = case when r.retry_delay_ms is null then now() end,
    operator_status_code = r.status_code, operator_error = r.error,
    lease_token = null, lease_expires_at = null
  from r where n.id = r.delivery_id and n.lease_token = r.lease_token`;

/** Due notices the claim considers at most: its turns between organizations are taken among these. */
const NOTICE_CANDIDATES = 1000;

/**
 * The operator channel as the dispatcher loop's storage: a second `WebhookDispatcher` runs on it
 * with its own few slots, so operational webhooks go through the same attempt, signing, lease and
 * retry code as business deliveries without taking a business slot.
 */
const operatorNoticeStorage = (
  rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[]>, channel: OperatorChannel,
): DeliveryStorage => ({
  claimDue: Effect.fnUntraced(function* (
    limit: number, leaseMs: number, _policy: DeliveryPolicy, held: HeldSlots,
  ) {
    const found = yield* rows<NoticeRow>(CLAIM_NOTICES, [
      limit, NOTICE_CANDIDATES, leaseMs, held.organizationShare, inFlightJson(held.inFlightByOrganization, "organization_id"),
    ]);
    const origin = endpointOrigin(channel.url);
    const due: DueDelivery[] = found.map((row) => ({
      id: Number(row.id), organizationId: Number(row.organization_id), endpointId: Number(row.endpoint_id), url: channel.url, origin,
      secret: channel.secret, envelopeId: row.envelope_id, attempt: row.attempt, leaseToken: row.lease_token, probe: false,
      body: operationalEnvelopeBody({
        envelopeId: row.envelope_id, kind: row.kind, organizationId: Number(row.organization_id), endpointId: Number(row.endpoint_id),
        endpointUrl: row.endpoint_url, reason: row.reason, at: row.at, disablesAt: row.disables_at,
      }),
    }));
    return { due, unreadable: [] };
  }),
  recordAttempts: Effect.fnUntraced(function* (
    records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy,
  ) {
    if (records.length > 0) yield* rows(RECORD_NOTICES, [JSON.stringify(records.map((record) => toResultRow(record, policy)))]);
  }),
  nextDueInMs: Effect.fnUntraced(function* () {
    const [row] = yield* rows<{ ms: number | null }>(
      `select extract(epoch from (min(n.operator_next_attempt_at) - now())) * 1000 as ms from endpoint_notices n
       where n.operator_status = 'pending' and ${UNLEASED("n")}`,
    );
    return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
  }),
});

export class DeliveryQueue extends Context.Service<
  DeliveryQueue,
  DeliveryStorage & {
    /** Pending deliveries, for the queue-depth gauge. */
    readonly queueDepth: () => Effect.Effect<number>;
    /** Per endpoint with deliveries pending or a circuit not closed: depth, in flight, circuit. */
    readonly endpointStats: () => Effect.Effect<ReadonlyArray<EndpointQueueStats>>;
    /**
     * Calls `onDelivery` whenever deliveries commit (LISTEN/NOTIFY on a connection of its own, to
     * `Database.listenUrl`); without one (a transaction pooler and no `listenUrl`) it listens to
     * nothing and says so (`listening: false`): the dispatcher polls.
     */
    readonly listen: (onDelivery: () => void, onError: (error: unknown) => void) => DeliveryListener;
    /**
     * The operator channel's queue: the endpoint notices pending their operational webhook, sent to
     * `channel` (the operator's URL and secret, never an organization's), claimed and recorded like deliveries.
     */
    readonly operatorNotices: (channel: OperatorChannel) => DeliveryStorage;
  }
>()("platter/persistence/DeliveryQueue") {
  static readonly layer = Layer.effect(
    DeliveryQueue,
    Effect.gen(function* () {
      const { rows, listenUrl, secrets: cipher } = yield* Database;
      const secrets = openedSecrets(cipher);
      return DeliveryQueue.of({
        claimDue: Effect.fnUntraced(function* (
          limit: number, leaseMs: number, policy: DeliveryPolicy, held: HeldSlots,
        ) {
          const claim = claimStatement(limit, leaseMs, policy, held);
          return toDue(yield* rows<ClaimedRow>(claim.text, claim.values), secrets);
        }),
        recordAttempts: Effect.fnUntraced(function* (
          records: ReadonlyArray<AttemptRecord>, policy: DeliveryPolicy,
        ) {
          if (records.length > 0) yield* rows(RECORD, recordValues(records, policy));
        }),
        queueDepth: Effect.fnUntraced(function* () {
          const [row] = yield* rows<{ n: string }>(`select count(*) as n from webhook_deliveries d where ${DISPATCHABLE("d")}`);
          return Number(row?.n ?? 0);
        }),
        endpointStats: Effect.fnUntraced(function* () {
          const found = yield* rows<{
            organization_id: string; endpoint_id: string; depth: number; in_flight: number; open_until_ms: string | null; now_ms: string;
          }>(
            `select e.organization_id, e.id as endpoint_id, count(d.id)::int as depth,
               (count(d.id) filter (where d.lease_expires_at > now()))::int as in_flight,
               (extract(epoch from e.circuit_open_until) * 1000)::bigint as open_until_ms,
               (extract(epoch from now()) * 1000)::bigint as now_ms
             from webhook_endpoints e left join webhook_deliveries d
               on d.organization_id = e.organization_id and d.endpoint_id = e.id and ${DISPATCHABLE("d")}
             where e.enabled
             group by e.id
             having count(d.id) > 0 or e.circuit_open_until is not null`,
          );
          return found.map((row) => ({
            organizationId: Number(row.organization_id),
            endpointId: Number(row.endpoint_id),
            queueDepth: row.depth,
            inFlight: row.in_flight,
            circuit: circuitState(row.open_until_ms === null ? undefined : Number(row.open_until_ms), Number(row.now_ms)),
          }));
        }),
        nextDueInMs: Effect.fnUntraced(function* (policy: DeliveryPolicy) {
          // Per endpoint: its earliest delivery nobody holds (plus the first-try delay when it was
          // never tried), or an open circuit's end. Leases of a dispatcher that died run out unseen:
          // the poll interval covers them.
          const [row] = yield* rows<{ ms: number | null }>(
            `with recursive ${ACTIVE_ENDPOINTS}
             select extract(epoch from (min(case when e.circuit_open_until > now() then e.circuit_open_until
                 else first.next_attempt_at + case when first.attempts = 0 then ?::int * interval '1 millisecond'
                                                   else interval '0' end end) - now())) * 1000 as ms
             from active a join webhook_endpoints e on e.id = a.endpoint_id and e.enabled
             cross join lateral (select d.next_attempt_at, d.attempts from webhook_deliveries d
               where d.organization_id = e.organization_id and d.endpoint_id = e.id and ${DISPATCHABLE("d")} and ${UNLEASED("d")}
               order by d.next_attempt_at, d.id limit 1) first`,
            [firstAttemptDelayMs(policy)],
          );
          return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
        }),
        operatorNotices: (channel) => operatorNoticeStorage(rows, channel),
        listen: (onDelivery, onError) =>
          listenUrl === undefined ? { listening: false, close: async () => {} } : listenForDeliveries(listenUrl, onDelivery, onError),
      });
    }),
  );
}
