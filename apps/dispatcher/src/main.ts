import { pino } from "pino";
import { ConfigError, loadDispatcherConfig } from "./config.ts";
import { startDispatcher } from "./dispatcher-process.ts";

/** The dispatcher process: configuration, start, and a graceful stop on SIGTERM or SIGINT. */
const main = async () => {
  const config = loadDispatcherConfig();
  const logger = pino({ name: "platter-dispatcher", level: config.logLevel });
  const dispatcher = await startDispatcher(config, logger);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "finishing in-flight attempts");
    await dispatcher.stop();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
};

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? `configuration error: ${error.message}` : error);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
