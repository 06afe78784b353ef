import { Migration } from "@mikro-orm/migrations";

/**
 * Marks that bound a history row's time by its id (issue #32: finding a delivery or a message by id read one
 * primary-key probe per partition). A mark is a table's identity sequence value read before a partition's lower
 * bound: every row whose id is at most that value has a `created_at` before the bound (`HistoryPartitions`
 * writes them, `rowTimeById` reads them). One row per table and partition, removed with the partition.
 */
export class Migration20261204010000HistoryIdMarks extends Migration {
  override up(): void {
    this.addSql(`create table history_id_marks (
        table_name text not null,
        partition_from timestamptz(3) not null,
        last_id bigint not null,
        primary key (table_name, partition_from)
      );`);
  }
}
