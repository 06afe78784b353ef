import { Migration } from "@mikro-orm/migrations";

/**
 * Ended API keys (revoked, expired, rolled out) can be removed by the retention sweep: the request
 * log keeps a removed key's number without a reference (its own retention removes those rows, and
 * it shows "Key N" once the key is gone), and the sweep gets the index it checks the audit log's
 * references by.
 */
export class Migration20261129060000EndedKeysRemovable extends Migration {
  override up(): void {
    this.addSql(`
      alter table api_requests drop constraint api_requests_api_key_id_fkey;
      create index if not exists audit_log_api_key_idx on audit_log (api_key_id) where api_key_id is not null;
    `);
  }
}
