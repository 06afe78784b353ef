/** Scoping: who is calling, and which organization every query is confined to. */

export const ACCESS_LEVELS = ["read", "read_write"] as const;
/** What an API key may do. */
export type Access = (typeof ACCESS_LEVELS)[number];

declare const scopeBrand: unique symbol;

/**
 * The authenticated caller. Only authentication creates one (see `authenticatedScope`),
 * and every organization-scoped repository call takes it first, so a handler cannot
 * pick the organization itself.
 */
export interface OrgScope {
  readonly [scopeBrand]: true;
  readonly organizationId: number;
  readonly access: Access;
  readonly currency: string;
  readonly apiKeyId: number;
}

/** Builds the scope of a verified API key. Call only after the key was checked. */
export const authenticatedScope = (fields: {
  organizationId: number;
  access: Access;
  currency: string;
  apiKeyId: number;
}): OrgScope => fields as OrgScope;

/** Scope for operator tooling (CLI, seeding) acting on one organization with full access. */
export const operatorScope = (organizationId: number, currency: string): OrgScope =>
  authenticatedScope({ organizationId, access: "read_write", currency, apiKeyId: 0 });

/**
 * Scope of a live Developer-area session: full access to its one organization (the area creates
 * and revokes keys). Call only after the session's token was checked.
 */
export const developerSessionScope = (organizationId: number, currency: string): OrgScope =>
  authenticatedScope({ organizationId, access: "read_write", currency, apiKeyId: 0 });
