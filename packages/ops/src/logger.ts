import { pino, type Logger } from "pino";

/** Structured JSON logs on stdout (pino): one line per event, cheap enough for the hot path. */
export const createLogger = (name: string, level: string): Logger => pino({ name, level });

/**
 * What a request process says when a read replica leaves its reads or comes back: one line per
 * change (a warning while it is out, info when it is current again).
 */
export const replicaLog =
  (logger: Logger) =>
  (replica: string, condition: "current" | "lagging" | "unavailable" | "not a standby", lagMs: number | undefined): void => {
    if (condition === "current") logger.info({ replica, lagMs }, "read replica current again: it takes reads");
    else logger.warn({ replica, condition, lagMs }, `read replica ${condition}: its reads go to the primary until it is current`);
  };
