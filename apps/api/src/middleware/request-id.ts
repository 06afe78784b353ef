import { randomUUID } from "node:crypto";
import type { Context } from "koa";

const SAFE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Every response carries `x-request-id`: the caller's own when it is sane, else a new one (called first, by the app's edge). */
export const assignRequestId = (ctx: Context): void => {
  const incoming = ctx.get("x-request-id");
  ctx.state["requestId"] = SAFE_REQUEST_ID.test(incoming) ? incoming : `req_${randomUUID().replaceAll("-", "")}`;
  ctx.set("x-request-id", ctx.state["requestId"]);
};
