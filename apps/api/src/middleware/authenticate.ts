import { Forbidden, type OrgScope, Unauthenticated } from "@platter/domain";
import { ApiKeyRepository, type AuthenticatedKey, type RequestStorage } from "@platter/persistence";
import { Effect } from "effect";
import type { Context, Middleware } from "koa";
import { type KeyRateLimits, limitedAuthentication } from "@platter/ops";
import type { BudgetedRunner } from "../budgeted-runner.ts";

/** Where a request's key is kept on its context (`ctx.state`): a property, not a WeakMap entry per request. */
const KEY = Symbol("platter/api/key");

const keyOf = (ctx: Context): AuthenticatedKey | undefined => (ctx.state as { [KEY]?: AuthenticatedKey })[KEY];

/**
 * The API's authentication (`limitedAuthentication` with the key store), which keeps each
 * request's key on its context: `run(ctx, then)` for a route's one program, and the middleware
 * form for routes that do more before their program (a create reads its body).
 */
export const authentication = (runner: BudgetedRunner, limits: KeyRateLimits, clientAddress: (ctx: Context) => string) => {
  const run = limitedAuthentication<AuthenticatedKey, RequestStorage>({
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
