import { Migration } from "@mikro-orm/migrations";

/**
 * An endpoint can be edited: it gets a description of its integrator's own (at most 500
 * characters, `ENDPOINT_DESCRIPTION_MAX_CHARACTERS`), and the audit log records what an edit changed,
 * before and after, in a bounded `details` column (at most 32 KiB as JSON text, `AUDIT_DETAILS_MAX_BYTES`).
 */
export class Migration20261130010000EndpointDescriptionAndAuditDetails extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints
        add column description text,
        add constraint webhook_endpoints_description_check check (char_length(description) <= 500);
      alter table audit_log
        add column details jsonb,
        add constraint audit_log_details_check check (octet_length(details::text) <= 32768);
    `);
  }
}
