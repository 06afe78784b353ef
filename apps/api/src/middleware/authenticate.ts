import { Forbidden, type OrgScope, parseBearerKey, RateLimited, Unauthenticated } from "@platter/domain";
import { ApiKeyRepository, type AuthenticatedKey, type RequestStorage } from "@platter/persistence";
import { Effect } from "effect";
import type { Context, Middleware } from "koa";
import { addressGroup } from "@platter/ops";
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

/** How `limitedAuthentication` reaches the key store and the database. */
export interface LimitedAuthentication<Found> {
  readonly limits: KeyRateLimits;
  readonly clientAddress: (ctx: Context) => string;
  /** Runs one program for the request (the API's `BudgetedRunner.run`). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;
  /** The program that finds the presented key (`Unauthenticated` when it is not live); given the key and its hash. */
  readonly lookup: (secret: string, keyHash: string) => Effect.Effect<Found, unknown, RequestStorage>;
  /** Told what was found before the organization's count (so a 429 still knows its caller). */
  readonly found?: (ctx: Context, found: Found) => void;
}

/**
 * Authentication and rate limits of one request, in the order that keeps floods off the database:
 * an address that has used up its failed authentications is refused (429) and the presented key
 * counted against its own limit, both before the key is looked up; then the key is looked up (a
 * failure is counted against the address, 401) and the request counted against its
 * organization's limits. The returned function runs the lookup and then `then(found)` (the
 * route's own program, made once the caller is known; what it throws is thrown as is) as one
 * program: one fiber, one run of the request's database budget for both. The API's routes, and
 * the Developer area's CLI routes (`platter listen`, whose lookup finds the key as an actor).
 */
export const limitedAuthentication = <Found extends { readonly scope: OrgScope }>(options: LimitedAuthentication<Found>) =>
  async <A, E>(ctx: Context, then: (found: Found) => Effect.Effect<A, E, RequestStorage>): Promise<A> => {
    const { limits } = options;
    const address = addressGroup(options.clientAddress(ctx));
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
    return options.run(
      ctx,
      options.lookup(secret, keyHash).pipe(
        Effect.tapError((error) =>
          error instanceof Unauthenticated ? Effect.promise(() => limits.failedAuthentication(address, keyHash)) : Effect.void),
        Effect.flatMap((found) => {
          options.found?.(ctx, found);
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

/**
 * The API's authentication (`limitedAuthentication` with the key store), which keeps each
 * request's key on its context: `run(ctx, then)` for a route's one program, and the middleware
 * form for routes that do more before their program (a create reads its body).
 */
export const authentication = (runner: BudgetedRunner, limits: KeyRateLimits, clientAddress: (ctx: Context) => string) => {
  const run = limitedAuthentication<AuthenticatedKey>({
    limits,
    clientAddress,
    run: (ctx, program) => runner.run(ctx, program),
    lookup: (_secret, keyHash) => ApiKeyRepository.use((repository) => repository.authenticateHash(keyHash)),
    found: (ctx, found) => {
      (ctx.state as { [KEY]?: AuthenticatedKey })[KEY] = found;
    },
  });
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
