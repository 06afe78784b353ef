import { createLogger, replicaLog, runUntilSignalled, startTracesService } from "@platter/ops";
import { DatabaseUnreachable, isSecretKeyRefusal, requestStorage, startPlatform } from "@platter/persistence";
import { ConfigError, loadApiConfig } from "./config.ts";
import { startApi } from "./server.ts";

/** The API process: configuration, the platform (database, pool, migrations), then the API on it until SIGTERM or SIGINT. */
runUntilSignalled(async (services) => {
  const config = loadApiConfig();
  const logger = createLogger("platter-api", config.logLevel);
  // Started first, stopped last: the spans of the last requests are sent.
  const traces = config.traces === undefined ? undefined : await services.add("traces", () => startTracesService(config.traces!));
  const platform = await services.add("platform", () => startPlatform(requestStorage, { ...config, tracer: traces?.tracer }, {
    onWaiting: (address, reason) => logger.warn({ address, reason }, "waiting for the database"),
    onReplica: replicaLog(logger),
  }));
  await services.add("api", () => startApi(config, logger, platform.runtime, traces));
  return (message, fields) => logger.info(fields ?? {}, message);
}, (error) => error instanceof ConfigError, (error) => error instanceof DatabaseUnreachable || isSecretKeyRefusal(error));
