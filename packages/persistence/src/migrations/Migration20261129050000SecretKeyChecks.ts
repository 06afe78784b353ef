import { Migration } from "@mikro-orm/migrations";

/**
 * One check value per key id of `SECRET_ENCRYPTION_KEYS` (a known text sealed with that key),
 * written at the first start that gives the id and verified at every start after: a different key
 * under a known id is refused even while no secret is sealed with it yet.
 */
export class Migration20261129050000SecretKeyChecks extends Migration {
  override up(): void {
    this.addSql(`
      create table secret_key_checks (
        key_id text primary key,
        check_value text not null,
        created_at timestamptz(3) not null default now()
      );
    `);
  }
}
