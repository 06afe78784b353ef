import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook words: the outbox row is a webhook message (`webhook_messages`), and a delivery names
 * its message (`message_id`). Inside the code "event" is only ever a catered event.
 */
export class Migration20261123000000WebhookMessages extends Migration {
  override up(): void {
    this.addSql(`
      alter table outbox_events rename to webhook_messages;
      alter index outbox_events_pending_idx rename to webhook_messages_pending_idx;
      alter table webhook_messages rename constraint outbox_events_pkey to webhook_messages_pkey;
      alter table webhook_messages rename constraint outbox_events_envelope_id_key to webhook_messages_envelope_id_key;
      alter table webhook_messages rename constraint outbox_events_organization_id_fkey to webhook_messages_organization_id_fkey;
      alter sequence outbox_events_id_seq rename to webhook_messages_id_seq;

      alter table webhook_deliveries rename column outbox_event_id to message_id;
      alter table webhook_deliveries rename constraint webhook_deliveries_outbox_event_id_fkey to webhook_deliveries_message_id_fkey;
      alter table webhook_deliveries
        rename constraint webhook_deliveries_endpoint_id_outbox_event_id_key to webhook_deliveries_endpoint_id_message_id_key;

      -- The wake-up trigger, named the way the entity model declares it.
      drop trigger outbox_events_notify on webhook_messages;
      drop function platter_notify_outbox();
      create function webhook_messages_webhook_messages_notify_fn() returns trigger as $$ begin perform pg_notify('platter_outbox', ''); return null; end; $$ language plpgsql;
      create trigger webhook_messages_notify after insert on webhook_messages
        for each statement execute function webhook_messages_webhook_messages_notify_fn();
    `);
  }
}
