import { Migration } from "@mikro-orm/migrations";

/**
 * Fair, cheaper delivery.
 *
 * - Deliveries are created in the transaction that records their message (one per subscribed,
 *   enabled endpoint), so the dispatcher has no fan-out step and no message is ever updated. A
 *   delivery no longer copies its message's envelope and body: the dispatcher renders the body from
 *   the stored message on every try (the same bytes each time).
 * - Claims walk due deliveries endpoint by endpoint: the due index leads with the endpoint.
 * - Fewer index entries per write: the unique key leads with the message, so it also finds a
 *   message's deliveries (retention) and the separate message index goes; pages keep half free
 *   (fillfactor 50), so a claim, which changes only unindexed lease columns, is a HOT update (0.91 of
 *   claims were in npm run bench:webhooks, 0.38 at fillfactor 80; WAL per delivery 1,202 B against 1,450 B).
 * - Endpoints carry their circuit: consecutive failed attempts and, while open, until when.
 *
 * Messages recorded before this migration and not fanned out yet get their deliveries here, so
 * nothing is lost on upgrade.
 */
export class Migration20261123030000FairDelivery extends Migration {
  override up(): void {
    this.addSql(`
      insert into webhook_deliveries (organization_id, endpoint_id, message_id, envelope_id, event_type, body)
      select m.organization_id, e.id, m.id, m.envelope_id, m.type, ''
      from webhook_messages m
      join webhook_endpoints e on e.organization_id = m.organization_id and e.enabled
        and (cardinality(e.event_types) = 0 or m.type = any(e.event_types))
      where m.fanned_out_at is null
      on conflict (endpoint_id, message_id) do nothing;

      drop trigger webhook_messages_notify on webhook_messages;
      drop function webhook_messages_webhook_messages_notify_fn();
      drop index webhook_messages_pending_idx;
      drop index webhook_messages_fanned_out_idx;
      alter table webhook_messages drop column fanned_out_at;
      create index webhook_messages_created_at_idx on webhook_messages (created_at);

      drop index webhook_deliveries_due_idx;
      alter table webhook_deliveries drop column envelope_id, drop column event_type, drop column body;
      alter table webhook_deliveries drop constraint webhook_deliveries_endpoint_id_message_id_key;
      alter table webhook_deliveries add constraint webhook_deliveries_message_id_endpoint_id_key unique (message_id, endpoint_id);
      drop index webhook_deliveries_message_idx;
      alter table webhook_deliveries set (fillfactor = 50);
      create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending';

      create function webhook_deliveries_webhook_deliveries_notify_fn() returns trigger language plpgsql as $body$
      begin
        perform pg_notify('platter_deliveries', '');
        return null;
      end
      $body$;
      create trigger webhook_deliveries_notify after insert on webhook_deliveries
        for each row execute function webhook_deliveries_webhook_deliveries_notify_fn();

      alter table webhook_endpoints add column consecutive_failures int not null default 0,
        add column circuit_open_until timestamptz(3) null;
    `);
  }
}
