import { createLogger, replicaLog, runUntilSignalled } from "@platter/ops";
import { DatabaseUnreachable, isSecretKeyRefusal, requestStorage, startPlatform } from "@platter/persistence";
import { ConfigError, loadDeveloperAreaConfig } from "./config.ts";
import { startDeveloperArea } from "./server.ts";

/** The Developer area process: configuration, the platform (database, pool, migrations), then the area on it until SIGTERM or SIGINT. */
runUntilSignalled(async (services) => {
  const config = loadDeveloperAreaConfig();
  const logger = createLogger("platter-developer-area", config.logLevel);
  const platform = await services.add("platform", () => startPlatform(requestStorage, config, {
    onWaiting: (address, reason) => logger.warn({ address, reason }, "waiting for the database"),
    onReplica: replicaLog(logger),
  }));
  await services.add("developer-area", () => startDeveloperArea(config, logger, platform.runtime));
  return (message, fields) => logger.info(fields ?? {}, message);
}, (error) => error instanceof ConfigError, (error) => error instanceof DatabaseUnreachable || isSecretKeyRefusal(error));
