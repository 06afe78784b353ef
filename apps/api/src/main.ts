import { createLogger, replicaLog, runUntilSignalled } from "@platter/ops";
import { DatabaseUnreachable, isSecretKeyRefusal, requestStorage, startPlatform } from "@platter/persistence";
import { ConfigError, loadApiConfig } from "./config.ts";
import { startApi } from "./server.ts";

/** The API process: configuration, the platform (database, pool, migrations), then the API on it until SIGTERM or SIGINT. */
runUntilSignalled(async (services) => {
  const config = loadApiConfig();
  const logger = createLogger("platter-api", config.logLevel);
  const platform = await services.add("platform", () => startPlatform(requestStorage, config, {
    onWaiting: (address, reason) => logger.warn({ address, reason }, "waiting for the database"),
    onReplica: replicaLog(logger),
  }));
  await services.add("api", () => startApi(config, logger, platform.runtime));
  return (message, fields) => logger.info(fields ?? {}, message);
}, (error) => error instanceof ConfigError, (error) => error instanceof DatabaseUnreachable || isSecretKeyRefusal(error));
