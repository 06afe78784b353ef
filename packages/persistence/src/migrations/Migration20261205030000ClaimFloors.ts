import { Migration } from "@mikro-orm/migrations";

/**
 * The dispatcher's claim floor (issue #32: the claim read every past partition's due index, about 28 blocks each, even
 * when it held nothing pending): per table, the oldest `created_at` that may still hold a row the claim looks for. The
 * retention's turn raises it (`HistoryPartitions.raiseClaimFloor`), a replay lowers it in its own statement
 * (`LOWER_CLAIM_FLOOR`), and the claim prunes the partitions wholly below it. One row, for `webhook_deliveries`,
 * starting at `-infinity` (nothing pruned until the first turn).
 */
export class Migration20261205030000ClaimFloors extends Migration {
  override up(): void {
    this.addSql(`create table claim_floors (
        table_name text not null,
        made_from timestamptz(3) not null,
        primary key (table_name)
      );`);
    this.addSql(`insert into claim_floors (table_name, made_from) values ('webhook_deliveries', '-infinity');`);
  }
}
