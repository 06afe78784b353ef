import { Migration } from "@mikro-orm/migrations";

/**
 * An attempt's primary key leads with its delivery: `(delivery_id, id, delivery_created_at)` instead of
 * `(id, delivery_created_at)` beside an index `(delivery_id, id)` (issue #32, the worker's total cost).
 * Every read of attempts finds them by their delivery (its attempts in order, its last one), and none by
 * an attempt's id alone, so the key serves those reads and the second index goes: each recorded attempt
 * writes two index entries instead of three (about 70 bytes of WAL less per delivery in `bench:webhooks`).
 * The key still holds the partition key, as a partitioned table's must; each partition's copy is built here.
 */
export class Migration20261204040000AttemptKeyLeadsWithDelivery extends Migration {
  override up(): void {
    this.addSql(`alter table webhook_attempts drop constraint webhook_attempts_pkey;`);
    this.addSql(`drop index webhook_attempts_delivery_idx;`);
    this.addSql(`alter table webhook_attempts add constraint webhook_attempts_pkey primary key (delivery_id, id, delivery_created_at);`);
  }
}
