import { Migration } from "@mikro-orm/migrations";

/**
 * `webhook_attempts` is an append-only log that only the dispatcher writes, from the delivery rows
 * it has just leased (and housekeeping deletes, attempts before their delivery). Its foreign keys
 * made PostgreSQL run two key checks per attempt, each locking a row (the organization's, FOR KEY
 * SHARE, by every dispatcher at once): about 14 µs of database CPU per delivery and WAL for the
 * locks (pg_stat_statements with track = all, tools/bench-webhooks). The keys are kept by the code
 * that writes the rows, as in pg-boss's job table.
 */
export class Migration20261124060000AttemptLogKeys extends Migration {
  override up(): void {
    this.addSql(`
      alter table webhook_attempts drop constraint webhook_attempts_organization_id_fkey;
      alter table webhook_attempts drop constraint webhook_attempts_delivery_id_fkey;
    `);
  }
}
