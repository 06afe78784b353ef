import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * The processes running against this database, by role (`api`, `dispatcher`), each seen within
 * the last heartbeats: how per-key rate limits and per-endpoint caps are shared out between them.
 * System data: no organization's.
 */
export const ProcessInstanceEntity = defineEntity({
  name: "ProcessInstance",
  tableName: "process_instances",
  properties: {
    id: p.uuid().primary(),
    role: p.text(),
    seenAt: p.datetime(3).defaultRaw("now()"),
  },
});
