import { runUntilSignalled } from "@platter/ops";
import { ConfigError, loadApiConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { startApi } from "./server.ts";

/** The API process: configuration, start, and a graceful drain on SIGTERM or SIGINT. */
runUntilSignalled(async () => {
  const config = loadApiConfig();
  const logger = createLogger("platter-api", config.logLevel);
  const api = await startApi(config, logger);
  return { log: (message, fields) => logger.info(fields ?? {}, message), stop: api.stop };
}, (error) => error instanceof ConfigError);
