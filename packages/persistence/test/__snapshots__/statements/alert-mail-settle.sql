update alert_mails m set
  status = case when $1::text = 'retry' then 'pending' else $2::text end,
  error = $3::text,
  next_attempt_at = case when $4::text = 'retry' then now() + $5::bigint * interval '1 millisecond' else m.next_attempt_at end,
  completed_at = case when $6::text = 'retry' then null else now() end,
  lease_token = null, lease_expires_at = null
where m.id = $7 and m.lease_token = $8::uuid and m.status in ('sending', 'abandoned')
