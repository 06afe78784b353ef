import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Every response carries `x-request-id`: the caller's own when it is sane, else a new one. */
export const requestId: Middleware = async (ctx, next) => {
  const incoming = ctx.get("x-request-id");
  ctx.state["requestId"] = SAFE_REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll("-", "")}`;
  ctx.set("x-request-id", ctx.state["requestId"]);
  await next();
};
