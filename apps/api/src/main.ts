import { createLogger, runUntilSignalled } from "@platter/ops";
import { openPlatform } from "@platter/persistence";
import { ConfigError, loadApiConfig } from "./config.ts";
import { startApi } from "./server.ts";

/** The API process: configuration, the platform (database, pool, migrations), the API, and a graceful drain on SIGTERM or SIGINT. */
runUntilSignalled(async () => {
  const config = loadApiConfig();
  const logger = createLogger("platter-api", config.logLevel);
  const platform = await openPlatform(config);
  const api = await startApi(config, logger, platform);
  return {
    log: (message, fields) => logger.info(fields ?? {}, message),
    stop: async () => {
      await api.stop();
      await platform.dispose();
    },
  };
}, (error) => error instanceof ConfigError);
