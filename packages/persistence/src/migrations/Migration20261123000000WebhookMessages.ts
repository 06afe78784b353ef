import { Migration } from "@mikro-orm/migrations";

/**
 * Webhook words: the outbox row is a webhook message (`webhook_messages`), and a delivery names
 * its message (`message_id`). Inside the code "event" is only ever a catered event.
 *
 * Only renames: no row, type, constraint rule or behaviour changes. Every object named after
 * `outbox_events` follows the table. The wake-up trigger keeps its definition and its NOTIFY
 * channel (`platter_outbox`); its function takes the name MikroORM gives a trigger's function
 * (`<table>_<trigger>_fn`), the only name under which MikroORM reads its body back to compare it
 * with the entity (see WebhookMessageEntity's `triggers`).
 */
export class Migration20261123000000WebhookMessages extends Migration {
  override up(): void {
    this.addSql(`
      alter table outbox_events rename to webhook_messages;
      alter sequence outbox_events_id_seq rename to webhook_messages_id_seq;
      alter index outbox_events_pending_idx rename to webhook_messages_pending_idx;
      alter table webhook_messages rename constraint outbox_events_pkey to webhook_messages_pkey;
      alter table webhook_messages rename constraint outbox_events_envelope_id_key to webhook_messages_envelope_id_key;
      alter table webhook_messages rename constraint outbox_events_organization_id_fkey to webhook_messages_organization_id_fkey;
      alter trigger outbox_events_notify on webhook_messages rename to webhook_messages_notify;
      alter function platter_notify_outbox() rename to webhook_messages_webhook_messages_notify_fn;

      alter table webhook_deliveries rename column outbox_event_id to message_id;
      alter table webhook_deliveries rename constraint webhook_deliveries_outbox_event_id_fkey to webhook_deliveries_message_id_fkey;
      alter table webhook_deliveries
        rename constraint webhook_deliveries_endpoint_id_outbox_event_id_key to webhook_deliveries_endpoint_id_message_id_key;

      -- PostgreSQL 18 also names every NOT NULL constraint (<table>_<column>_not_null); earlier
      -- versions have none to rename, so they are looked up rather than named.
      do $rename$
      declare
        found record;
      begin
        for found in
          select conrelid::regclass as table_name, conname from pg_constraint
          where contype = 'n'
            and conrelid in ('webhook_messages'::regclass, 'webhook_deliveries'::regclass)
            and (conname like 'outbox\\_events\\_%' or conname like '%outbox\\_event\\_id%')
        loop
          execute format('alter table %s rename constraint %I to %I', found.table_name, found.conname,
            replace(replace(found.conname, 'outbox_events_', 'webhook_messages_'), 'outbox_event_id', 'message_id'));
        end loop;
      end
      $rename$;
    `);
  }
}
