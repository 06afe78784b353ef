import { defineEntity, p } from "@mikro-orm/postgresql";
import { OrganizationEntity } from "./organization.entity.ts";

/** An Idempotency-Key of a create, per organization, stored in the transaction that creates the record. */
export const IdempotencyKeyEntity = defineEntity({
  name: "IdempotencyKey",
  tableName: "idempotency_keys",
  properties: {
    organization: p.manyToOne(OrganizationEntity).primary(),
    key: p.text().primary(),
    requestFingerprint: p.text(),
    responseStatus: p.integer(),
    responseBody: p.json<{ id: number }>(),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  indexes: [{ name: "idempotency_keys_created_idx", properties: ["createdAt"] }],
});
