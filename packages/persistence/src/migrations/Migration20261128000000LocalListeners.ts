import { Migration } from "@mikro-orm/migrations";

/**
 * Local forwarding (`platter listen`): a listener is an endpoint of its organization owned by one
 * API key (`listener_key_id`, at most one per key), whose URL is where the CLI forwards on the
 * integrator's machine. It gets deliveries while a listener is connected (`listening_until`, renewed
 * by the stream, whose token `listener_stream` is; a second stream with the key takes over), and those deliveries are marked `via_listener`: the dispatcher's due index leaves
 * them out (it never sends them), and the listeners' own index finds an endpoint's due ones.
 * An audit row may name an API key as its actor (`platter trigger` and `platter listen` with a key).
 */
export class Migration20261128000000LocalListeners extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints add column listener_key_id bigint references api_keys (id),
        add column listening_until timestamptz(3), add column listener_stream uuid;
      create unique index webhook_endpoints_listener_key_idx on webhook_endpoints (listener_key_id) where listener_key_id is not null;
      alter table webhook_deliveries add column via_listener boolean not null default false;
      drop index webhook_deliveries_due_idx;
      create index webhook_deliveries_due_idx on webhook_deliveries (organization_id, endpoint_id, next_attempt_at, id)
        where status = 'pending' and not via_listener;
      create index webhook_deliveries_listener_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id)
        where status = 'pending' and via_listener;
      alter table audit_log add column api_key_id bigint references api_keys (id),
        drop constraint audit_log_actor_check,
        add constraint audit_log_actor_check check (
          (session_id is not null and link_id is not null and operator is null and api_key_id is null)
          or (session_id is null and link_id is null and operator is not null and api_key_id is null)
          or (session_id is null and link_id is null and operator is null and api_key_id is not null)
        );
    `);
  }
}
