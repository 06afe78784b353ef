import { defineEntity, p } from "@mikro-orm/postgresql";

/**
 * The API processes running against this database, each seen within the last heartbeats: how
 * per-key rate limits are shared out between them. System data: no organization's.
 */
export const ApiInstanceEntity = defineEntity({
  name: "ApiInstance",
  tableName: "api_instances",
  properties: {
    id: p.uuid().primary(),
    seenAt: p.datetime(3).defaultRaw("now()"),
  },
});
