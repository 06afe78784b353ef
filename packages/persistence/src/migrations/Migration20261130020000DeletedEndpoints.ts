import { Migration } from "@mikro-orm/migrations";

/**
 * An endpoint can be deleted: `deleted_at` marks it (its secrets destroyed: `secret` is null then, and
 * only then; its slot under the organization's cap freed, its history still readable), and the retention sweep finds deleted
 * rows through a partial index to remove each once no delivery or notice refers to it.
 */
export class Migration20261130020000DeletedEndpoints extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_endpoints add column deleted_at timestamptz(3) null;
      alter table webhook_endpoints alter column secret drop not null;
      alter table webhook_endpoints add constraint webhook_endpoints_secret_check check (secret is not null or deleted_at is not null);
      create index webhook_endpoints_deleted_idx on webhook_endpoints (deleted_at, id) where deleted_at is not null;
    `);
  }
}
