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
 * The most that may wait while the destination does not keep up (a stalled pipe to a log
 * collector): lines beyond it are dropped and counted, and a warning says how many once there is
 * room again, so a flood of requests (one organization's, say) cannot grow the process's memory.
 */
export const LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/**
 * Structured JSON logs (pino) on stdout, or on `destination` (a file descriptor or path): one
 * line per event, written in batches (see `BATCH_BYTES`), at most `LOG_BUFFER_BYTES` waiting.
 */
export const createLogger = (name: string, level: string, destination: number | string = 1): Logger => {
  const stream = pino.destination({ dest: destination, sync: false, minLength: BATCH_BYTES, maxLength: LOG_BUFFER_BYTES });
  const logger = pino({ name, level }, stream);
  let dropped = 0;
  stream.on("drop", () => void dropped++);
  setInterval(() => {
    if (dropped > 0) {
      const lines = dropped;
      logger.warn({ dropped: lines }, "log lines dropped: the log destination did not keep up");
      // A drop is told synchronously: when the warning was dropped too, the count waits for the next tick.
      dropped = dropped > lines ? lines : 0;
    }
    stream.flush();
  }, FLUSH_EVERY_MS).unref();
  return logger;
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
