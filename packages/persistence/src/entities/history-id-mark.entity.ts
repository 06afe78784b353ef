import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * A history table's identity sequence value read before one of its partitions' lower bound: every row of the
 * table with an id at most `lastId` has a `created_at` before `partitionFrom` (history-partitions.ts,
 * `rowTimeById`). System data: no organization's.
 */
export const HistoryIdMarkEntity = defineEntity({
  name: "HistoryIdMark",
  tableName: "history_id_marks",
  properties: {
    tableName: p.text().primary(),
    partitionFrom: p.datetime(3).primary(),
    lastId: p.bigint("number"),
  },
});
