import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { ApiKeyEntity, OrganizationEntity } from "./organization.entity.ts";

/**
 * The Developer area's access: single-use sign-in links and the sessions they open; and the
 * organization's audit log of what those sessions (or the operator) changed. Tokens are stored only
 * as SHA-256 hashes; times are written from the Clock of the process that decided them (expiry is a decision).
 */

export const DeveloperSignInLinkEntity = defineEntity({
  name: "DeveloperSignInLink",
  tableName: "developer_sign_in_links",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    tokenHash: p.text().unique(),
    /** Who asked for it: `cli` (an operator) or `application` (the catering application for its user). */
    requestedBy: p.text(),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
    /** Set when it opened a session: a link opens one at most. */
    usedAt: p.datetime(3).nullable(),
  },
  indexes: [
    { name: "developer_sign_in_links_organization_idx", properties: ["organization", "id"] },
    // The retention sweep removes expired links oldest first.
    { name: "developer_sign_in_links_expires_idx", properties: ["expiresAt", "id"] },
  ],
  checks: [{ name: "developer_sign_in_links_requested_by_check", expression: "requested_by in ('cli', 'application', 'switch')" }],
});

export const DeveloperSessionEntity = defineEntity({
  name: "DeveloperSession",
  tableName: "developer_sessions",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    link: p.manyToOne(DeveloperSignInLinkEntity),
    tokenHash: p.text().unique(),
    /** The secret its forms carry back (cross-site request forgery protection). */
    formSecret: p.text(),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
    /** Set by "Sign out", or when the session is ended from the Sessions page or the CLI. */
    endedAt: p.datetime(3).nullable(),
    /** Where it was opened, in a few words from the User-Agent (`Chrome on Linux`); never the header itself. */
    deviceHint: p.text().nullable(),
    /** When it was last used, written at most once a minute. */
    lastSeenAt: p.datetime(3).nullable(),
  },
  indexes: [
    { name: "developer_sessions_organization_idx", properties: ["organization", "id"] },
    // The retention sweep removes expired sessions oldest first, and checks a link has none left.
    { name: "developer_sessions_expires_idx", properties: ["expiresAt", "id"] },
    { name: "developer_sessions_link_idx", properties: ["link"] },
  ],
});

/** The organization's audit log: who changed its keys, endpoints and deliveries. Each row names one actor. */
export const AuditLogEntity = defineEntity({
  name: "AuditLog",
  tableName: "audit_log",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    /** A Developer-area session, and the sign-in link that let it in; or neither, and `operator`. */
    session: p.manyToOne(DeveloperSessionEntity).nullable().deleteRule("no action"),
    link: p.manyToOne(DeveloperSignInLinkEntity).nullable().deleteRule("no action"),
    /** The operator who made the change (`root via the CLI`). */
    operator: p.text().nullable(),
    /** The API key that made the change (`platter trigger`, `platter listen`), for a change made with a key. */
    apiKey: p.manyToOne(ApiKeyEntity).nullable().deleteRule("no action"),
    /** What was done (`api_key.created`). */
    action: p.text(),
    /** To what (`api_key 12`). */
    subject: p.text(),
    at: p.datetime(3),
    /** What the change changed, before and after (`AuditDetails`; at most `AUDIT_DETAILS_MAX_BYTES` as JSON text). */
    details: p.json<unknown>().nullable(),
  },
  indexes: [
    { name: "audit_log_organization_idx", expression: "create index audit_log_organization_idx on audit_log (organization_id, at desc, id desc)" },
    // The retention sweep (`AUDIT_LOG_RETENTION`) walks every organization's oldest rows; it keeps a
    // session or link while a row names it.
    { name: "audit_log_at_idx", properties: ["at", "id"] },
    { name: "audit_log_api_key_idx", expression: "create index audit_log_api_key_idx on audit_log (api_key_id) where api_key_id is not null" },
    { name: "audit_log_session_idx", expression: "create index audit_log_session_idx on audit_log (session_id) where session_id is not null" },
    { name: "audit_log_link_idx", expression: "create index audit_log_link_idx on audit_log (link_id) where link_id is not null" },
  ],
  checks: [{ name: "audit_log_details_check", expression: "octet_length(details::text) <= 32768" }, {
    name: "audit_log_actor_check",
    expression: "(session_id is not null and link_id is not null and operator is null and api_key_id is null) or (session_id is null and link_id is null and operator is not null and api_key_id is null) or (session_id is null and link_id is null and operator is null and api_key_id is not null)",
  }],
});
