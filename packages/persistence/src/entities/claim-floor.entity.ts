import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * A claim's floor: every row of `tableName` its claim may take has a `created_at` at or after `madeFrom`, so the claim
 * prunes the partitions wholly below it (delivery-claim.ts, `SINCE_CLAIM_FLOOR`; raised by `HistoryPartitions`,
 * lowered by a replay). System data: no organization's.
 */
export const ClaimFloorEntity = defineEntity({
  name: "ClaimFloor",
  tableName: "claim_floors",
  properties: {
    tableName: p.text().primary(),
    madeFrom: p.datetime(3),
  },
});
