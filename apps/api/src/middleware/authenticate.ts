import { Forbidden, type OrgScope, parseBearerKey, Unauthenticated } from "@platter/domain";
import { ApiKeyRepository, type AuthenticatedKey } from "@platter/persistence";
import type { Context, Middleware } from "koa";
import { addressGroup } from "../client-address.ts";
import { RateLimited } from "../http-errors.ts";
import type { KeyRateLimits, RateLimitDecision } from "../rate-limits.ts";
import type { BudgetedRunner } from "../budgeted-runner.ts";

/** The key of each authenticated request, as authentication found it. */
const keys = new WeakMap<Context, AuthenticatedKey>();

/** Tells the caller where it stands; throws `RateLimited` when the decision refused the request. */
const apply = (ctx: Context, decision: RateLimitDecision): void => {
  ctx.set(decision.headers);
  if (decision.refused !== undefined) throw new RateLimited(decision.refused);
};

/**
 * Authenticates a request's bearer key with `lookup` and counts it against its limits, in the order
 * that keeps floods off the database: an address that has used up its failed authentications is
 * refused (429) and the presented key counted against its own limit, both before the key is looked
 * up; then the key is looked up (a failure is counted against the address, 401) and the request
 * counted against its organization's limits. What `lookup` found. The API's `authenticate`, and the
 * Developer area's CLI routes (`platter listen`), which look the key up as an actor.
 */
export const authenticateLimited = async <Found extends { readonly scope: OrgScope }>(
  ctx: Context, limits: KeyRateLimits, clientAddress: (ctx: Context) => string, lookup: (secret: string) => Promise<Found>,
): Promise<Found> => {
  const address = addressGroup(clientAddress(ctx));
  const secret = parseBearerKey(ctx.get("authorization") || undefined);
  const keyHash = secret === undefined ? undefined : limits.hashOf(secret);
  const locked = await limits.checkAddress(address, keyHash);
  if (locked !== undefined) apply(ctx, locked);
  if (secret === undefined || keyHash === undefined) {
    await limits.failedAuthentication(address, undefined);
    throw new Unauthenticated();
  }
  const key = await limits.countKey(keyHash);
  const keyRefusal = limits.keyRefusal(key);
  if (keyRefusal !== undefined) apply(ctx, keyRefusal);
  let found: Found;
  try {
    found = await lookup(secret);
  } catch (error) {
    if (error instanceof Unauthenticated) await limits.failedAuthentication(address, keyHash);
    throw error;
  }
  apply(ctx, await limits.countOrganization(keyHash, key, found.scope.organizationId, ctx.method === "POST"));
  return found;
};

/** The API's authentication (`authenticateLimited` with the key store); stores the caller's key; runs only on routes that exist. */
export const authenticate =
  (runner: BudgetedRunner, limits: KeyRateLimits, clientAddress: (ctx: Context) => string): Middleware =>
  async (ctx, next) => {
    keys.set(ctx, await authenticateLimited(ctx, limits, clientAddress,
      (secret) => runner.run(ctx, ApiKeyRepository.use((repository) => repository.authenticate(secret)))));
    await next();
  };

/** Refuses read-only keys before the body is even read. */
export const requireWriteAccess: Middleware = async (ctx, next) => {
  if (scopeOf(ctx).access !== "read_write") throw new Forbidden();
  await next();
};

/** The caller of this request if it was authenticated (logs), without requiring it. */
export const peekScope = (ctx: Context): OrgScope | undefined => keys.get(ctx)?.scope;

/** The authenticated caller of this request. */
export const scopeOf = (ctx: Context): OrgScope => {
  const key = keys.get(ctx);
  if (key === undefined) throw new Unauthenticated();
  return key.scope;
};

/** Whether this request's key wrote within the last `windowMs` (its reads then go to the primary). */
export const wroteWithin = (ctx: Context, windowMs: number): boolean => {
  const since = keys.get(ctx)?.msSinceWrite;
  return since !== undefined && since < windowMs;
};
