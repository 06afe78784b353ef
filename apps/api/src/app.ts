import Koa from "koa";
import type { Logger } from "pino";
import { UnknownEndpoint } from "./http-errors.ts";
import { errorResponse } from "./middleware/error-response.ts";
import { requestId } from "./middleware/request-id.ts";
import type { ApiObservability } from "./observability.ts";
import type { KeyRateLimits } from "./rate-limits.ts";
import { createRouter } from "./routes.ts";
import { watchOutages } from "@platter/ops";
import { pingDatabase, type PlatformRuntime } from "@platter/persistence";

const SERVED_METHODS = new Set(["GET", "POST"]);

/**
 * The public API application. Request path: request id → error mapping → method guard →
 * router → unknown endpoint. The router would answer HEAD (and with allowedMethods, OPTIONS)
 * for GET routes on its own, so other methods are refused before it.
 */
export const createApiApp = (
  runtime: PlatformRuntime,
  logger: Logger,
  limits: KeyRateLimits,
  observability: ApiObservability,
): Koa => {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const router = createRouter(runtime, limits);
  const outages = watchOutages({
    probe: () => runtime.runPromise(pingDatabase),
    onDown: (reason) => logger.error({ err: reason }, "database unavailable: answering 503 until it is back"),
    onUp: (downForMs) => logger.info({ downForMs }, "database available again"),
  });
  app.use(requestId);
  app.use(observability.middleware);
  app.use(errorResponse(logger, outages));
  app.use(async (ctx, next) => {
    if (!SERVED_METHODS.has(ctx.method)) throw new UnknownEndpoint();
    await next();
  });
  app.use(router.routes());
  app.use(async (ctx) => {
    if (ctx.matched === undefined || ctx.body === undefined) throw new UnknownEndpoint();
  });
  return app;
};
