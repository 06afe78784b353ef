-- Due mails nobody holds, numbered within their organization, oldest first.
with due as (
    select m.id, m.next_attempt_at, row_number() over (partition by m.organization_id order by m.next_attempt_at, m.id) as turn
    from alert_mails m where m.status = 'pending' and m.next_attempt_at <= now() and (m.lease_expires_at is null or m.lease_expires_at < now())
  ),
  -- Organizations take turns: every one's first, then every one's second; locked, skipping rows another claim holds.
  picked as (
    select m.id from alert_mails m
    where m.id in (select due.id from due order by due.turn, due.next_attempt_at, due.id limit $1)
    for update skip locked
  )
-- Committed sending before the SMTP call, under a lease.
update alert_mails m set status = 'sending', attempts = m.attempts + 1, lease_token = gen_random_uuid(), lease_expires_at = (now() + $2::bigint * interval '1 millisecond')
from picked, endpoint_notices n
where m.id = picked.id and n.id = m.notice_id
returning m.id::int as id, m.lease_token, m.attempts as attempt, m.email, n.organization_id::int as organization_id, n.endpoint_id::int as endpoint_id, n.kind,
  n.reason, n.endpoint_url, to_char(n.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, to_char(n.disables_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as disables_at
