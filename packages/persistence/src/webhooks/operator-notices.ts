import {
  type AttemptRecord, type DeliveryPolicy, type DeliveryStorage, type DueDelivery, endpointOrigin, type HeldSlots, type WrittenNoticeKind,
  operationalEnvelopeBody, type DatabaseUnavailable,
  DELIVERY_DECISION, type DeliveryColumn, withInputs,
} from "@platter/domain";
import { Effect } from "effect";
import { isoTimestamp } from "../keyset-page.ts";
import { RESULT_COLUMNS, toResultRow } from "./attempt-record.ts";
import { ruleSql } from "./decision-sql.ts";
import { inFlightJson } from "./delivery-claim.ts";
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
 * The operator channel's claim: due notices nobody holds, organizations taking turns (each one's
 * oldest first, then each one's second…) among the oldest `window` due, and no organization past its
 * share of this channel's slots (`held`), so a tenant whose endpoints all fail cannot hold the
 * channel. Its full text as PostgreSQL runs it: `test/__snapshots__/statements/operator-notice-claim.sql`.
 * Parameters: limit, window, lease ms, organization share, held per organization (jsonb).
 */
export const CLAIM_NOTICES = `-- The claim's numbers.
with params as materialized (
    select ?::int as claim_limit, ?::int as candidates, ?::int as lease_ms, ?::int as organization_share
  ),
  -- What this channel already has in flight per organization.
  organization_held as (select * from jsonb_to_recordset(?::jsonb) as held(organization_id bigint, in_flight int)),
  -- The oldest due notices nobody holds, at most \`candidates\` of them.
  due as (
    select n.id, n.organization_id, n.operator_next_attempt_at from endpoint_notices n
    where n.operator_status = 'pending' and n.operator_next_attempt_at <= now() and ${unleased("n")}
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

/** Due notices the claim considers at most: its turns between organizations are taken among these. */
const NOTICE_CANDIDATES = 1000;

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
      limit, NOTICE_CANDIDATES, leaseMs, held.organizationShare, inFlightJson(held.inFlightByOrganization, "organization_id"),
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
