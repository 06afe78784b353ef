import { Migration } from "@mikro-orm/migrations";

/** API instances announce themselves here, so per-key rate limits can be shared out between them. */
export class Migration20261123040000ApiInstances extends Migration {
  override up(): void {
    this.addSql(`create table api_instances (id uuid primary key, seen_at timestamptz(3) not null default now());`);
  }
}
