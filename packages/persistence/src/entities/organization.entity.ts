import { defineEntity, p } from "@mikro-orm/postgresql";

/** An organization (tenant) and the API keys that act for it. */

export const OrganizationEntity = defineEntity({
  name: "Organization",
  tableName: "organizations",
  properties: {
    id: p.bigint("number").primary().autoincrement().generated("by default as identity"),
    name: p.text(),
    currency: p.string().columnType("char(3)"),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: p.bigint("number").primary().autoincrement().generated("by default as identity"),
    organization: p.manyToOne(OrganizationEntity).index("api_keys_organization_idx"),
    keyHash: p.text().unique(),
    displayPrefix: p.text(),
    access: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    revokedAt: p.datetime(3).nullable(),
    lastUsedAt: p.datetime(3).nullable(),
  },
  checks: [{ name: "api_keys_access_check", expression: "access in ('read', 'read_write')" }],
});
