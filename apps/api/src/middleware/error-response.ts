import { isApiError, type OutageWatch, toHttpError } from "@platter/ops";
import type { Context } from "koa";
import type { Logger } from "pino";

/**
 * Turns anything thrown below into `{"error": …}`. Expected errors get their mapped status and
 * text (a database outage is told to `outages`, which logs it once); anything else is logged with
 * its request id and answered with an opaque 500. Called by the app's edge with what it caught.
 */
export const errorResponse =
  (logger: Logger, outages: OutageWatch) =>
  (ctx: Context, thrown: unknown): void => {
    if (isApiError(thrown)) {
      if (thrown._tag === "DatabaseUnavailable") outages.down(thrown.reason);
      const { status, error, headers } = toHttpError(thrown);
      ctx.status = status;
      if (headers) ctx.set(headers);
      ctx.body = { error };
      return;
    }
    logger.error({ err: thrown, requestId: ctx.state["requestId"], method: ctx.method, path: ctx.path }, "unhandled error");
    ctx.status = 500;
    ctx.body = { error: "Internal server error" };
  };
