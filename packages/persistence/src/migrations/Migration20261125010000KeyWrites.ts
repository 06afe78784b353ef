import { Migration } from "@mikro-orm/migrations";

/**
 * When a key last wrote (a create through the API): for the read-your-writes window, in which that
 * key's reads go to the primary rather than to a replica that may not have the write yet.
 */
export class Migration20261125010000KeyWrites extends Migration {
  override up(): void {
    this.addSql(`alter table api_keys add column wrote_at timestamptz(3);`);
  }
}
