import { Migration } from "@mikro-orm/migrations";

/**
 * A delivery ended without its attempts deciding it says why (`settled_reason`: its endpoint was
 * disabled), and the retention sweep gets the indexes it walks: the audit log by time across
 * organizations, Developer-area sessions and sign-in links by expiry, and the references that must
 * be checked before an expired session or link is removed (the audit log's, a session's link).
 */
export class Migration20261129040000EndedDeliveriesAndAccessRetention extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_deliveries add column settled_reason text;
      create index if not exists audit_log_at_idx on audit_log (at, id);
      create index if not exists audit_log_session_idx on audit_log (session_id) where session_id is not null;
      create index if not exists audit_log_link_idx on audit_log (link_id) where link_id is not null;
      create index developer_sessions_expires_idx on developer_sessions (expires_at, id);
      create index developer_sessions_link_idx on developer_sessions (link_id);
      create index developer_sign_in_links_expires_idx on developer_sign_in_links (expires_at, id);
    `);
  }
}
