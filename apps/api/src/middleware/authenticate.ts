import { Forbidden, type OrgScope, parseBearerKey, Unauthenticated } from "@platter/domain";
import { ApiKeyRepository } from "@platter/persistence";
import type { Context, Middleware } from "koa";
import type { PlatformRuntime } from "@platter/persistence";
import { RateLimited } from "../http-errors.ts";
import type { KeyRateLimits } from "../rate-limits.ts";
import { runProgram } from "../runtime.ts";

/** The scope of each authenticated request, as authentication made it. */
const scopes = new WeakMap<Context, OrgScope>();

/**
 * Counts the request against the key's rate limit (before the key is looked up, so a flood costs
 * the database nothing), then verifies the bearer key and stores the caller's scope; runs only on
 * routes that exist.
 */
export const authenticate =
  (runtime: PlatformRuntime, limits: KeyRateLimits): Middleware =>
  async (ctx, next) => {
    const secret = parseBearerKey(ctx.get("authorization") || undefined);
    if (secret === undefined) throw new Unauthenticated();
    const decision = await limits.consume(secret, ctx.method === "POST");
    ctx.set(decision.headers);
    if (decision.retryAfterSeconds !== undefined) throw new RateLimited({ retryAfterSeconds: decision.retryAfterSeconds });
    scopes.set(ctx, await runProgram(runtime, ApiKeyRepository.use((keys) => keys.authenticate(secret))));
    await next();
  };

/** Refuses read-only keys before the body is even read. */
export const requireWriteAccess: Middleware = async (ctx, next) => {
  if (scopeOf(ctx).access !== "read_write") throw new Forbidden();
  await next();
};

/** The caller of this request if it was authenticated (logs), without requiring it. */
export const peekScope = (ctx: Context): OrgScope | undefined => scopes.get(ctx);

/** The authenticated caller of this request. */
export const scopeOf = (ctx: Context): OrgScope => {
  const scope = scopes.get(ctx);
  if (scope === undefined) throw new Unauthenticated();
  return scope;
};
