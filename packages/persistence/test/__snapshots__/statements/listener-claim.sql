update webhook_deliveries d set lease_token = gen_random_uuid(), lease_expires_at = (now() + $1::bigint * interval '1 millisecond') where d.organization_id = $2 and (d.id in (
    -- The listener's deliveries that may be handed out now, oldest first, skipping rows another claim holds.
    select due.id from webhook_deliveries due
    where due.endpoint_id = $3 and due.status = 'pending' and due.via_listener and due.next_attempt_at <= now() and (due.lease_expires_at is null or due.lease_expires_at < now())
      -- Only while this stream holds the listener and its key works.
      and exists (select 1 from webhook_endpoints w where w.id = due.endpoint_id and w.listener_key_id = $4
        and w.listener_stream = $5::uuid and exists (select 1 from api_keys k where k.id = w.listener_key_id and k.revoked_at is null
  and (k.expires_at is null or k.expires_at > now())))
    order by due.next_attempt_at, due.id
    -- Up to its free share: LISTENER_IN_FLIGHT less the deliveries it holds now.
    limit greatest(0, $6::int - (select count(*)::int from webhook_deliveries in_flight
      where in_flight.endpoint_id = $7 and in_flight.status = 'pending' and in_flight.via_listener and in_flight.lease_expires_at >= now()))
    for update skip locked)) returning d.id, d.attempts + 1 as attempt, d.lease_token
