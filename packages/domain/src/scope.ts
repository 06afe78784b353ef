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

/**
 * Who makes a change to an organization's settings (its keys, endpoints, deliveries), for its
 * audit log: a Developer-area session (scope from signing in, and the sign-in link that let it in),
 * the operator (scope from an explicit operator action; `name` says who, as `root via the CLI`), or
 * an API key (`platter listen` and `platter trigger` with a key; scope from authenticating it).
 */
export type Actor = SessionActor | OperatorActor | ApiKeyActor;

/** A Developer-area session acting on its organization. */
export interface SessionActor {
  readonly _tag: "DeveloperSession";
  readonly scope: OrgScope;
  readonly sessionId: number;
  readonly linkId: number;
}

/** The operator acting on one organization. */
export interface OperatorActor {
  readonly _tag: "Operator";
  readonly scope: OrgScope;
  readonly name: string;
}

/** An API key acting on its organization (its scope's `apiKeyId`). */
export interface ApiKeyActor {
  readonly _tag: "ApiKey";
  readonly scope: OrgScope;
}

/** The key `scope` was authenticated with, as the actor of a change (only a key's own scope makes one). */
export const apiKeyActor = (scope: OrgScope): ApiKeyActor => ({ _tag: "ApiKey", scope });

/** The operator named `name` acting in `scope` (made by an explicit operator action). */
export const operatorActor = (scope: OrgScope, name: string): OperatorActor => ({ _tag: "Operator", scope, name });
