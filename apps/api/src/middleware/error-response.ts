import { isPlatterError, jsonAnswer } from "@platter/domain";
import type { OutageWatch } from "@platter/ops";
import { hasMissingPartition } from "@platter/persistence";
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
      // Not an outage that passes by itself: history's partitions are not being made ahead (HistoryPartitions).
      if (hasMissingPartition(thrown.reason)) {
        logger.error({ err: thrown.reason, requestId: ctx.state["requestId"] }, "no history partition takes this row: partitions are not made ahead (start an API or a dispatcher, or see WEBHOOK_HISTORY_PARTITION)");
      }
      outages.down(thrown.reason);
    }
    const answer = jsonAnswer(thrown);
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  };
