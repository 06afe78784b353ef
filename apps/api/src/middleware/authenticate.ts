import { Forbidden, type OrgScope, parseBearerKey, Unauthenticated } from "@platter/domain";
import { ApiKeyRepository, type AuthenticatedKey, type RequestStorage } from "@platter/persistence";
import { Effect } from "effect";
import type { Context, Middleware } from "koa";
import { addressGroup } from "../client-address.ts";
import { RateLimited } from "../http-errors.ts";
import type { KeyRateLimits, RateLimitDecision } from "../rate-limits.ts";
import type { BudgetedRunner } from "../budgeted-runner.ts";

/** Where a request's key is kept on its context (`ctx.state`): a property, not a WeakMap entry per request. */
const KEY = Symbol("platter/api/key");

const keyOf = (ctx: Context): AuthenticatedKey | undefined => (ctx.state as { [KEY]?: AuthenticatedKey })[KEY];

/** Tells the caller where it stands; throws `RateLimited` when the decision refused the request. */
const apply = (ctx: Context, decision: RateLimitDecision): void => {
  ctx.set(decision.headers);
  if (decision.refused !== undefined) throw new RateLimited(decision.refused);
};

/**
 * Authentication and rate limits of one route, in the order that keeps floods off the database:
 * an address that has used up its failed authentications is refused (429) and the presented key
 * counted against its own limit, both before the key is looked up; then the key is looked up (a
 * failure is counted against the address, 401) and the request counted against its
 * organization's limits. Runs only on routes that exist. `then` runs the route's own program in
 * the same fiber as the key lookup: one run of the request's budget for both.
 */
export const authentication = (runner: BudgetedRunner, limits: KeyRateLimits, clientAddress: (ctx: Context) => string) => {
  /**
   * Runs the key lookup and then `then(key)` (the route's program, made once the caller is known;
   * what it throws is thrown as is) as one program within the request's database budget.
   */
  const run = async <A, E>(
    ctx: Context, then: (key: AuthenticatedKey) => Effect.Effect<A, E, RequestStorage>,
  ): Promise<A> => {
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
    const isCreate = ctx.method === "POST";
    return runner.run(
      ctx,
      ApiKeyRepository.use((repository) => repository.authenticateHash(keyHash)).pipe(
        Effect.tapError((error) =>
          error instanceof Unauthenticated ? Effect.promise(() => limits.failedAuthentication(address, keyHash)) : Effect.void),
        Effect.flatMap((found) => {
          (ctx.state as { [KEY]?: AuthenticatedKey })[KEY] = found;
          return Effect.flatMap(
            Effect.promise(() => limits.countOrganization(keyHash, key, found.scope.organizationId, isCreate)),
            (decision) => {
              apply(ctx, decision);
              return then(found);
            },
          );
        }),
      ),
    );
  };
  /** Middleware form for routes that do more before their program (a create reads its body): the key is looked up, then `next`. */
  const middleware: Middleware = async (ctx, next) => {
    await run(ctx, () => Effect.void);
    await next();
  };
  return { run, middleware };
};

/** Refuses read-only keys before the body is even read. */
export const requireWriteAccess: Middleware = async (ctx, next) => {
  if (scopeOf(ctx).access !== "read_write") throw new Forbidden();
  await next();
};

/** The caller of this request if it was authenticated (logs), without requiring it. */
export const peekScope = (ctx: Context): OrgScope | undefined => keyOf(ctx)?.scope;

/** The authenticated caller of this request. */
export const scopeOf = (ctx: Context): OrgScope => {
  const key = keyOf(ctx);
  if (key === undefined) throw new Unauthenticated();
  return key.scope;
};
