import { type OrgScope, parseBearerKey, Unauthenticated } from "@platter/domain";
import { Effect } from "effect";
import type { Context } from "koa";
import { addressGroup } from "./client-address.ts";
import { RateLimited } from "@platter/domain";
import type { KeyRateLimits, RateLimitDecision } from "./rate-limits.ts";

/** Tells the caller where it stands; throws `RateLimited` when the decision refused the request. */
const apply = (ctx: Context, decision: RateLimitDecision): void => {
  ctx.set(decision.headers);
  if (decision.refused !== undefined) throw new RateLimited(decision.refused);
};

/** How `limitedAuthentication` reaches the key store and the database; `R` is what its programs need (the request's storage). */
export interface LimitedAuthentication<Found, R> {
  readonly limits: KeyRateLimits;
  readonly clientAddress: (ctx: Context) => string;
  /** Runs one program for the request (the API's `BudgetedRunner.run`). */
  readonly run: <A, E>(ctx: Context, program: Effect.Effect<A, E, R>) => Promise<A>;
  /** The program that finds the presented key (`Unauthenticated` when it is not live); given the key and its hash. */
  readonly lookup: (secret: string, keyHash: string) => Effect.Effect<Found, unknown, R>;
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
export const limitedAuthentication = <Found extends { readonly scope: OrgScope }, R>(options: LimitedAuthentication<Found, R>) =>
  async <A, E>(ctx: Context, then: (found: Found) => Effect.Effect<A, E, R>): Promise<A> => {
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
