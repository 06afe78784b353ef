import {
  type AttemptRecord, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, endpointOrigin, type HeldSlots, type WrittenNoticeKind,
  operationalEnvelopeBody, type DatabaseUnavailable,
  DELIVERY_DECISION, type DeliveryColumn, withInputs,
} from "@platter/domain";
import { Effect } from "effect";
import { isoTimestamp } from "../keyset-page.ts";
import { RESULT_COLUMNS, toResultRow } from "./attempt-record.ts";
import { ruleSql } from "./decision-sql.ts";
import { type IndexDescent, indexWalk, inFlightJson } from "./delivery-claim.ts";
import { CLEAR_LEASE, heldBy, takeLease, unleased } from "./lease.ts";

/**
 * The notice queue: endpoint notices pending their operational webhook to the operator's channel,
 * claimed and recorded like deliveries by a second dispatcher loop.
 */

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
  kind: WrittenNoticeKind;
  reason: string;
  endpoint_url: string;
  at: string;
  disables_at: string | null;
  attempt: number;
  lease_token: string;
}

/**
 * One descent into `endpoint_notices_operator_due_idx` (organization, next attempt, id; pending
 * notices only): the first `column` value of pending notices (in `scope`) matching `bound`, in `order`.
 */
const PENDING_NOTICE: IndexDescent = (column, scope, bound, order) =>
  `(select d.${column} from endpoint_notices d where d.operator_status = 'pending'${scope} and ${bound} order by ${order} limit 1)`;

/** The index's orders: downwards for the walk's steps, upwards for the lowest organization with pending notices. */
const BY_ORGANIZATION = "d.organization_id desc, d.operator_next_attempt_at desc";
const BY_ORGANIZATION_UP = "d.organization_id, d.operator_next_attempt_at";

/**
 * The operator channel's claim: due notices nobody holds, organizations taking turns (each one's
 * oldest first, then each one's second…), and no organization past its share of this channel's
 * slots (`held`), so a tenant whose endpoints all fail cannot hold the channel. It reads in
 * proportion to the organizations it walks, never to the notices waiting: it walks organizations
 * with pending notices (one descent each of `endpoint_notices_operator_due_idx`) from a random one,
 * wrapping around, at most `organizations` of them besides those at their share, and takes of each
 * only its oldest due notices it may still claim; over successive claims every organization gets its
 * turn, however many notices one of them has waiting. Its full text as PostgreSQL runs it:
 * `test/__snapshots__/statements/operator-notice-claim.sql`.
 * Parameters: limit, organizations to walk, lease ms, organization share, held per organization (jsonb).
 */
export const CLAIM_NOTICES = `with recursive
  -- The claim's numbers, and its one random turn.
  params as materialized (
    select ?::int as claim_limit, ?::int as organization_budget, ?::int as lease_ms, ?::int as organization_share, random() as turn
  ),
  -- What this channel already has in flight per organization.
  organization_held as (select * from jsonb_to_recordset(?::jsonb) as held(organization_id bigint, in_flight int)),
  -- Where the walk over organizations starts (drawn between the lowest and the highest with pending notices) and how far
  -- it goes: the budget, and the organizations at their share besides (walked past).
  organization_range as materialized (
    select bounds.lo + floor(params.turn * (bounds.hi - bounds.lo + 1))::bigint as start,
      params.organization_budget + (
        select count(*) from organization_held where organization_held.in_flight >= params.organization_share
      )::int as budget
    from params,
      (select ${PENDING_NOTICE("organization_id", "", "true", BY_ORGANIZATION_UP)} as lo,
              ${PENDING_NOTICE("organization_id", "", "true", BY_ORGANIZATION)} as hi) bounds
  ),
  -- The organizations with pending notices, walked from there.
  ${indexWalk(PENDING_NOTICE)("organization_walk", "organization_id", "", BY_ORGANIZATION, "(select start from organization_range)", "(select budget from organization_range)")},
  -- Each walked organization's oldest due notices nobody holds, as many as it may still claim.
  due as (
    select notice.id, notice.organization_id, notice.operator_next_attempt_at, coalesce(organization_held.in_flight, 0) as held
    from organization_walk walked cross join params
    left join organization_held on organization_held.organization_id = walked.id
    cross join lateral (
      select n.id, n.organization_id, n.operator_next_attempt_at from endpoint_notices n
      where n.organization_id = walked.id and n.operator_status = 'pending' and n.operator_next_attempt_at <= now() and ${unleased("n")}
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
update endpoint_notices n set ${takeLease("params.lease_ms")}
from params where n.id in (select id from picked) and n.operator_status = 'pending' and ${unleased("n")}
returning n.id, n.organization_id, n.endpoint_id, n.envelope_id, n.kind, n.reason, n.endpoint_url, ${isoTimestamp("n.created_at")} as at,
  ${isoTimestamp("n.disables_at")} as disables_at, n.operator_attempts + 1 as attempt, n.lease_token`;

/** `DELIVERY_DECISION`'s column `column` for a notice: its result in the statement, and no endpoint to disable (always enabled). */
const notice = (column: DeliveryColumn) =>
  ruleSql(withInputs(DELIVERY_DECISION[column], { endpointEnabled: true }), { outcome: "results.outcome", retryDelayMs: "results.retry_delay_ms" });

/**
 * The operator channel's results, moved as the domain's `DELIVERY_DECISION` moves a delivery (the
 * SQL generated from it, its endpoint always enabled; by the lease holder only): done, retried after
 * the schedule's delay, or failed for good; the last answer kept.
 * Parameter: results (jsonb).
 */
export const RECORD_NOTICES = `-- The batch's results, one row per attempt.
with results as (select * from jsonb_to_recordset(?::jsonb) as ${RESULT_COLUMNS})
-- Each notice moved as \`DELIVERY_DECISION\` says, by its lease holder only, and its lease cleared.
update endpoint_notices n set
  operator_status = ${notice("status")},
  operator_attempts = greatest(n.operator_attempts, results.attempt),
  operator_next_attempt_at = coalesce(${notice("nextTry")}, n.operator_next_attempt_at),
  operator_completed_at = ${notice("completedAt")},
  operator_status_code = results.status_code, operator_error = results.error,
  ${CLEAR_LEASE}
from results where n.id = results.delivery_id and ${heldBy("n", "results.lease_token")}`;

/**
 * Organizations with pending notices one claim walks at most (besides those at their share): its
 * turns are taken among theirs, a random stretch of them each claim.
 */
const NOTICE_ORGANIZATIONS = 64;

/**
 * The operator channel as the dispatcher loop's storage: a second `WebhookDispatcher` runs on it
 * with its own few slots, so operational webhooks go through the same attempt, signing, lease and
 * retry code as business deliveries without taking a business slot.
 */
export const operatorNoticeStorage = (
  rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>, channel: OperatorChannel,
): DeliveryStorage => ({
  claimDue: Effect.fnUntraced(function* (
    limit: number, leaseMs: number, _policy: DeliveryPolicy, held: HeldSlots,
  ) {
    const found = yield* rows<NoticeRow>(CLAIM_NOTICES, [
      limit, NOTICE_ORGANIZATIONS, leaseMs, held.organizationShare, inFlightJson(held.inFlightByOrganization, "organization_id"),
    ]);
    const origin = endpointOrigin(channel.url);
    const due: DueDelivery[] = found.map((row) => ({
      id: Number(row.id), organizationId: Number(row.organization_id), endpointId: Number(row.endpoint_id), url: channel.url, origin,
      secret: channel.secret, envelopeId: row.envelope_id, attempt: row.attempt, leaseToken: row.lease_token, probe: false, createdAt: row.at,
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
       where n.operator_status = 'pending' and ${unleased("n")}`,
    );
    return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
  }),
});
