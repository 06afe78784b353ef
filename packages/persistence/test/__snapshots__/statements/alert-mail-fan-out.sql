-- Notices whose mails are not written yet, numbered within their organization, oldest first.
with waiting as (
    select n.id, row_number() over (partition by n.organization_id order by n.id) as turn
    from endpoint_notices n where n.mail_status = 'pending'
  ),
  -- Organizations take turns: every one's first, then every one's second; locked, so two dispatchers fan out different ones.
  notices as (
    select n.id, n.organization_id from endpoint_notices n
    where n.id in (select waiting.id from waiting order by waiting.turn, waiting.id limit $1) and n.mail_status = 'pending'
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
select (select count(*) from done)::int as notices, (select count(*) from mails)::int as mails
