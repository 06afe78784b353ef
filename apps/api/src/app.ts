import Koa, { type Context, type Middleware, type Next } from "koa";
import type { Logger } from "pino";
import { UnknownEndpoint } from "@platter/domain";
import { clientAddressResolver, type KeyRateLimits, type TrustedProxies, watchOutages } from "@platter/ops";
import { errorResponse } from "./middleware/error-response.ts";
import { assignRequestId } from "./middleware/request-id.ts";
import type { ApiObservability } from "./observability.ts";
import { createRouter, type ReplicaReadRouting } from "./routes.ts";
import { BudgetedRunner } from "./budgeted-runner.ts";
import { pingDatabase, type RequestRuntime } from "@platter/persistence";

const SERVED_METHODS = new Set(["GET", "POST"]);

/** What an API app is told besides its runtime, logger, limits and metrics (the process passes its configuration). */
export interface ApiAppOptions {
  /** Which proxies may tell the client's address (`TRUST_PROXY`); none when omitted. */
  readonly trustProxy?: TrustedProxies;
  /**
   * Longest one request waits on the database in all (`REQUEST_DATABASE_TIMEOUT`); when omitted
   * (tests and benchmarks of other things), only the pool's own bounds apply.
   */
  readonly requestDatabaseTimeoutMs?: number;
  /** Set when the platform has read replicas: GETs read from them (see `createRouter`). */
  readonly replicaReads?: ReplicaReadRouting;
}

/**
 * The API's edge, in one middleware (one step of Koa's chain instead of four): request id, then
 * metrics and the request's log line around error mapping (`answerError`) and the method guard.
 * Exported for tools/bench, which measures it on its own.
 */
export const apiEdge = (observability: ApiObservability, answerError: (ctx: Context, thrown: unknown) => void): Middleware => {
  const guarded = async (ctx: Context, next: Next): Promise<void> => {
    try {
      if (!SERVED_METHODS.has(ctx.method)) throw new UnknownEndpoint();
      await next();
    } catch (thrown) {
      answerError(ctx, thrown);
    }
  };
  return (ctx, next) => {
    assignRequestId(ctx);
    return observability.middleware(ctx, () => guarded(ctx, next));
  };
};

/**
 * The public API application. Request path: request id → metrics and log → error mapping →
 * method guard → router → unknown endpoint. The router would answer HEAD (and with allowedMethods, OPTIONS)
 * for GET routes on its own, so other methods are refused before it.
 */
export const createApiApp = (
  runtime: RequestRuntime,
  logger: Logger,
  limits: KeyRateLimits,
  observability: ApiObservability,
  options: ApiAppOptions = {},
): Koa => {
  const app = new Koa();
  // Koa's own X-Forwarded-* reading stays off: the client address is resolved by `clientAddressResolver`.
  app.proxy = false;
  app.silent = true;
  const addressOf = clientAddressResolver(options.trustProxy ?? { kind: "none" });
  const runner = new BudgetedRunner(runtime, options.requestDatabaseTimeoutMs ?? Number.POSITIVE_INFINITY);
  const router = createRouter(runner, limits, (ctx) => addressOf(ctx.req), options.replicaReads);
  const outages = watchOutages({
    probe: () => runtime.runPromise(pingDatabase),
    onDown: (reason) => logger.error({ err: reason }, "database unavailable: answering 503 until it is back"),
    onUp: (downForMs) => logger.info({ downForMs }, "database available again"),
  });
  app.use(apiEdge(observability, errorResponse(logger, outages)));
  app.use(router.routes());
  app.use(async (ctx) => {
    if (ctx.matched === undefined || ctx.body === undefined) throw new UnknownEndpoint();
  });
  return app;
};
