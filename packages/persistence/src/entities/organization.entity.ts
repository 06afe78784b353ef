import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";

/** An organization (tenant) and the API keys that act for it. */

export const OrganizationEntity = defineEntity({
  name: "Organization",
  tableName: "organizations",
  properties: {
    id: identityId(),
    name: p.text(),
    currency: p.string().columnType("char(3)"),
    createdAt: p.datetime(3).defaultRaw("now()"),
    /** The live organization this one is the sandbox of (null for a live organization); one sandbox each. */
    sandboxOf: p.manyToOne("Organization" as never).fieldName("sandbox_of").nullable().unique().deleteRule("no action"),
  },
});

export const ApiKeyEntity = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity).index("api_keys_organization_idx"),
    /** What its organization calls it (the Developer area asks for one; older keys have ''). */
    name: p.text().default(""),
    keyHash: p.text().unique(),
    displayPrefix: p.text(),
    access: p.text(),
    createdAt: p.datetime(3).defaultRaw("now()"),
    revokedAt: p.datetime(3).nullable(),
    lastUsedAt: p.datetime(3).nullable(),
    wroteAt: p.datetime(3).nullable(),
    /** When it stops working (never when null); for a rolled key, the end of its overlap. */
    expiresAt: p.datetime(3).nullable(),
    /** The key that replaced it when it was rolled. */
    replacedBy: p.bigint("number").nullable(),
  },
  checks: [{ name: "api_keys_access_check", expression: "access in ('read', 'read_write')" }],
});
