import { isPlatterError, jsonAnswer } from "@platter/domain";
import type { OutageWatch } from "@platter/ops";
import type { Context } from "koa";
import type { Logger } from "pino";

/**
 * Turns anything thrown below into the catalogue's JSON answer (`jsonAnswer`): an expected error's
 * status, headers and text (a database outage is told to `outages`, which logs it once); anything
 * else is logged with its request id and answered with an opaque 500. Called by the app's edge with
 * what it caught.
 */
export const errorResponse =
  (logger: Logger, outages: OutageWatch) =>
  (ctx: Context, thrown: unknown): void => {
    if (!isPlatterError(thrown)) {
      logger.error({ err: thrown, requestId: ctx.state["requestId"], method: ctx.method, path: ctx.path }, "unhandled error");
    } else if (thrown._tag === "DatabaseUnavailable") {
      outages.down(thrown.reason);
    }
    const answer = jsonAnswer(thrown);
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  };
