import { defineEntity, p } from "@mikro-orm/postgresql";

/** An organization (tenant) and the API keys that act for it. */

export const OrganizationEntity = defineEntity({
  name: "Organization",
  tableName: "organizations",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    name: p.text(),
    currency: p.string().length(3),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    keyHash: p.text().unique(),
    displayPrefix: p.text(),
    access: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    revokedAt: p.datetime(3).nullable(),
    lastUsedAt: p.datetime(3).nullable(),
  },
});
