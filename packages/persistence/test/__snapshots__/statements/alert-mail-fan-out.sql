-- Notices whose mails are not written yet, oldest first, locked so two dispatchers fan out different ones.
with notices as (
    select n.id, n.organization_id from endpoint_notices n where n.mail_status = 'pending' order by n.id limit $1 for update skip locked
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
