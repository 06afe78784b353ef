import { Migration } from "@mikro-orm/migrations";

/**
 * An API key may expire (`expires_at`), and a rolled key names the key that replaced it
 * (`replaced_by`): its `expires_at` is then the end of the overlap in which both work.
 */
export class Migration20261125020000KeyLifetimes extends Migration {
  override up(): void {
    this.addSql(`alter table api_keys add column expires_at timestamptz(3), add column replaced_by bigint;`);
  }
}
