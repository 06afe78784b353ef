import { createServer, type Server } from "node:http";
import Router from "@koa/router";
import { apiEdge, type ApiObservability } from "@platter/api";
import Koa from "koa";
import pg from "pg";
import { referenceEvents } from "./reference-server.ts";

/**
 * The rungs between the reference and the API, to show where the API's CPU goes: the reference's
 * own `GET /v1/events` handler served by Koa and @koa/router (`koa`), and the same with the API's
 * edge in front (`koa-edge`: `apiEdge`, the API's own middleware, with the API's observability
 * `edge`: request id, metrics and the request log line, which here names no organization or key,
 * as no key was looked up; the organizations' sampled request log is not kept). Answered from
 * `pool`. What the API spends beyond `koa-edge` is its own: authentication and rate limits, the
 * Effect runtime, storage.
 */
export const ladderServer = (pool: pg.Pool, edge?: ApiObservability): Server => {
  const app = new Koa();
  app.silent = true;
  if (edge !== undefined) {
    app.use(apiEdge(edge, (ctx) => {
      ctx.status = 500;
      ctx.body = { error: "Internal server error" };
    }));
  }
  const router = new Router({ prefix: "/v1", strict: true, sensitive: true });
  router.get("/events", async (ctx) => {
    await referenceEvents(pool, ctx.get("authorization") || undefined, new URL(ctx.url, "http://127.0.0.1"), (status, body) => {
      ctx.status = status;
      ctx.body = body;
    });
  });
  app.use(router.routes());
  return createServer(app.callback());
};
