import { runUntilSignalled } from "@platter/ops";
import { pino } from "pino";
import { ConfigError, loadDispatcherConfig } from "./config.ts";
import { startDispatcher } from "./dispatcher-process.ts";

/** The dispatcher process: configuration, start, and on SIGTERM or SIGINT finishing in-flight attempts. */
runUntilSignalled(async () => {
  const config = loadDispatcherConfig();
  const logger = pino({ name: "platter-dispatcher", level: config.logLevel });
  const dispatcher = await startDispatcher(config, logger);
  return { log: (message, fields) => logger.info(fields ?? {}, message), stop: dispatcher.stop };
}, (error) => error instanceof ConfigError);
