import { ALERT_LAST_ERRORS, type AlertKind, type AlertMailOutcome, type AlertMailStorage, type ClaimedAlertMail, type DatabaseUnavailable } from "@platter/domain";
import { Effect } from "effect";
import { isoTimestamp } from "../keyset-page.ts";
import { CLEAR_LEASE, heldBy, takeLease, unleased } from "./lease.ts";

/**
 * The alert e-mails' outbox (`alert_mails`), every organization's, for the dispatcher's mailer: each
 * endpoint notice becomes one row per address its organization confirmed (`ALERT_FAN_OUT`, once per
 * notice: the row's `mail_status`), rows are claimed under the one lease and committed `sending`
 * before the SMTP call (`CLAIM_ALERT_MAILS`), and settled by their lease holder (`SETTLE_ALERT_MAIL`).
 * A row still `sending` once its lease ran out had a sender that stopped mid-send: it may have gone
 * out, so it is marked `abandoned` and never sent again (`ABANDON_ALERT_MAILS`): at most one mail per
 * notice and address, whatever happens to dispatchers.
 */

/** Notices whose mails are written per fan-out at most. */
const FAN_OUT_BATCH = 200;
/** Due mails one claim takes at most. */
const CLAIM_BATCH = 20;
/** Recent deliveries of an endpoint searched for its last errors. */
const RECENT_DELIVERIES = 50;

/**
 * Writes the mails of up to `limit` notices not yet fanned out: one per address of the notice's
 * organization confirmed now (an unconfirmed address gets none), and marks those notices done.
 * Organizations take turns (each one's oldest notice first, then each one's second…), so one
 * organization's burst of notices cannot hold back another's mails past this fan-out.
 * Parameter: limit. Returns how many notices and mails.
 */
export const ALERT_FAN_OUT = `-- Notices whose mails are not written yet, numbered within their organization, oldest first.
with waiting as (
    select n.id, row_number() over (partition by n.organization_id order by n.id) as turn
    from endpoint_notices n where n.mail_status = 'pending'
  ),
  -- Organizations take turns: every one's first, then every one's second; locked, so two dispatchers fan out different ones.
  notices as (
    select n.id, n.organization_id from endpoint_notices n
    where n.id in (select waiting.id from waiting order by waiting.turn, waiting.id limit ?) and n.mail_status = 'pending'
    for update skip locked
  ),
  -- One mail per notice and confirmed address of its organization (never twice: unique notice and address).
  mails as (
    insert into alert_mails (organization_id, notice_id, recipient_id, email)
    select notices.organization_id, notices.id, r.id, r.email
    from notices join alert_recipients r on r.organization_id = notices.organization_id and r.confirmed_at is not null
    on conflict (notice_id, recipient_id) do nothing returning 1
  ),
  -- Those notices are done: a notice is fanned out once.
  done as (update endpoint_notices n set mail_status = 'done' from notices where n.id = notices.id returning 1)
select (select count(*) from done)::int as notices, (select count(*) from mails)::int as mails`;

/** Mails whose sender stopped mid-send (still `sending`, lease run out): `abandoned`, never sent again. */
export const ABANDON_ALERT_MAILS = `update alert_mails m set status = 'abandoned', completed_at = now(),
  error = 'its sender stopped during the SMTP call: not sent again, as it may have arrived'
where m.status = 'sending' and ${unleased("m")}`;

/**
 * Claims up to `limit` due mails nobody holds, organizations taking turns (each one's oldest first,
 * then each one's second…), so one organization's many notices cannot hold back another's: committed
 * `sending` under a new lease with the notice each one tells. Parameters: limit, lease ms.
 */
export const CLAIM_ALERT_MAILS = `-- Due mails nobody holds, numbered within their organization, oldest first.
with due as (
    select m.id, m.next_attempt_at, row_number() over (partition by m.organization_id order by m.next_attempt_at, m.id) as turn
    from alert_mails m where m.status = 'pending' and m.next_attempt_at <= now() and ${unleased("m")}
  ),
  -- Organizations take turns: every one's first, then every one's second; locked, skipping rows another claim holds.
  picked as (
    select m.id from alert_mails m
    where m.id in (select due.id from due order by due.turn, due.next_attempt_at, due.id limit ?)
    for update skip locked
  )
-- Committed sending before the SMTP call, under a lease.
update alert_mails m set status = 'sending', attempts = m.attempts + 1, ${takeLease("?::bigint")}
from picked, endpoint_notices n
where m.id = picked.id and n.id = m.notice_id
returning m.id::int as id, m.lease_token, m.attempts as attempt, m.email, n.organization_id::int as organization_id, n.endpoint_id::int as endpoint_id, n.kind,
  n.reason, n.endpoint_url, ${isoTimestamp("n.created_at")} as at, ${isoTimestamp("n.disables_at")} as disables_at`;

/** An endpoint's last failed attempts among its recent deliveries, newest first. Parameters: organization, endpoint. */
export const ALERT_LAST_ERRORS_SQL = `select ${isoTimestamp("a.started_at")} as at, a.status_code, a.error
from (
  select d.id, d.created_at from webhook_deliveries d where d.organization_id = ? and d.endpoint_id = ?
  order by d.created_at desc, d.id desc limit ${RECENT_DELIVERIES}
) recent join webhook_attempts a on a.delivery_id = recent.id and a.delivery_created_at = recent.created_at
where a.status_code is null or a.status_code not between 200 and 299
order by a.id desc limit ${ALERT_LAST_ERRORS}`;

/**
 * One mail settled by its lease holder: sent, failed for good, or pending again after `retry_ms`
 * (the SMTP server took nothing). Also settles a mail marked `abandoned` meanwhile, since its holder
 * knows how the call ended. Parameters: outcome, error, retry ms, id, lease token.
 */
export const SETTLE_ALERT_MAIL = `update alert_mails m set
  status = case when ?::text = 'retry' then 'pending' else ?::text end,
  error = ?::text,
  next_attempt_at = case when ?::text = 'retry' then now() + ?::bigint * interval '1 millisecond' else m.next_attempt_at end,
  completed_at = case when ?::text = 'retry' then null else now() end,
  ${CLEAR_LEASE}
where m.id = ? and ${heldBy("m", "?::uuid")} and m.status in ('sending', 'abandoned')`;

interface ClaimedRow {
  id: number;
  lease_token: string;
  attempt: number;
  email: string;
  organization_id: number;
  endpoint_id: number;
  kind: AlertKind;
  reason: string;
  endpoint_url: string;
  at: string;
  disables_at: string | null;
}

/** The alert mail outbox on the pool's `rows` (the delivery queue hands it over: a system-level store). */
export const alertMailQueue = (
  rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>,
): AlertMailStorage => ({
  fanOut: Effect.fnUntraced(function* () {
    const [row] = yield* rows<{ mails: number }>(ALERT_FAN_OUT, [FAN_OUT_BATCH]);
    return row?.mails ?? 0;
  }),
  abandonStopped: Effect.fnUntraced(function* () {
    return (yield* rows<{ id: number }>(`${ABANDON_ALERT_MAILS} returning m.id`)).length;
  }),
  claim: Effect.fnUntraced(function* (leaseMs: number) {
    const claimed = yield* rows<ClaimedRow>(CLAIM_ALERT_MAILS, [CLAIM_BATCH, leaseMs]);
    return claimed.map((row): ClaimedAlertMail => ({
      id: row.id, leaseToken: row.lease_token, attempt: row.attempt, email: row.email, organizationId: row.organization_id,
      notice: {
        kind: row.kind, endpointId: row.endpoint_id, endpointUrl: row.endpoint_url, reason: row.reason, at: row.at, disablesAt: row.disables_at,
      },
    }));
  }),
  lastErrors: Effect.fnUntraced(function* (organizationId: number, endpointId: number) {
    const found = yield* rows<{ at: string; status_code: number | null; error: string | null }>(ALERT_LAST_ERRORS_SQL, [organizationId, endpointId]);
    return found.map((row) => ({ at: row.at, statusCode: row.status_code, error: row.error }));
  }),
  settle: Effect.fnUntraced(function* (mail: ClaimedAlertMail, outcome: AlertMailOutcome) {
    const error = outcome.outcome === "sent" ? null : outcome.error;
    const retryMs = outcome.outcome === "retry" ? outcome.retryInMs : 0;
    const settled = yield* rows<{ id: number }>(`${SETTLE_ALERT_MAIL} returning m.id`, [
      outcome.outcome, outcome.outcome, error, outcome.outcome, retryMs, outcome.outcome, mail.id, mail.leaseToken,
    ]);
    return settled.length > 0;
  }),
});
