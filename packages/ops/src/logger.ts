import { pino, type Logger } from "pino";

/**
 * How long a log line may wait in memory at most, and how many bytes are written at once: lines
 * are written in batches of about 4 KiB, or every 200 ms, whichever comes first, instead of one
 * write per line (the request log line's write was about 11 µs of a list request's CPU,
 * tools/bench). What is still buffered is written when the process exits, a crash included;
 * only a SIGKILL loses it.
 */
const BATCH_BYTES = 4096;
const FLUSH_EVERY_MS = 200;

/**
 * Structured JSON logs (pino) on stdout, or on `destination` (a file descriptor or path): one
 * line per event, written in batches (see `BATCH_BYTES`).
 */
export const createLogger = (name: string, level: string, destination: number | string = 1): Logger => {
  const stream = pino.destination({ dest: destination, sync: false, minLength: BATCH_BYTES });
  setInterval(() => stream.flush(), FLUSH_EVERY_MS).unref();
  return pino({ name, level }, stream);
};

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
