import { Migration } from "@mikro-orm/migrations";

/**
 * Processes announce themselves here by role, so what they share can be shared out between those
 * live: per-key rate limits between API instances, per-endpoint caps between dispatchers.
 */
export class Migration20261123040000ProcessInstances extends Migration {
  override up(): void {
    this.addSql(`create table process_instances (id uuid primary key, role text not null, seen_at timestamptz(3) not null default now());`);
  }
}
