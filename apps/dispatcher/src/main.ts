import { createLogger, runUntilSignalled } from "@platter/ops";
import { openPlatform } from "@platter/persistence";
import { ConfigError, loadDispatcherConfig } from "./config.ts";
import { startDispatcher } from "./dispatcher-process.ts";

/** The dispatcher process: configuration, the platform, delivery, and on SIGTERM or SIGINT finishing in-flight attempts. */
runUntilSignalled(async () => {
  const config = loadDispatcherConfig();
  const logger = createLogger("platter-dispatcher", config.logLevel);
  const platform = await openPlatform(config);
  const dispatcher = await startDispatcher(config, logger, platform);
  return {
    log: (message, fields) => logger.info(fields ?? {}, message),
    stop: async () => {
      await dispatcher.stop();
      await platform.dispose();
    },
  };
}, (error) => error instanceof ConfigError);
