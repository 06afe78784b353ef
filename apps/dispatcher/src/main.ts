import { createLogger, runUntilSignalled, startTracesService } from "@platter/ops";
import { DatabaseUnreachable, isSecretKeyRefusal, dispatcherStorage, startPlatform } from "@platter/persistence";
import { ConfigError, loadDispatcherConfig } from "./config.ts";
import { startDispatcher } from "./dispatcher-process.ts";

/** The dispatcher process: configuration, the platform, then delivery until SIGTERM or SIGINT finishes in-flight attempts. */
runUntilSignalled(async (services) => {
  const config = loadDispatcherConfig();
  const logger = createLogger("platter-dispatcher", config.logLevel);
  // Started first, stopped last: the spans of the last attempts are sent.
  const traces = config.traces === undefined ? undefined : await services.add("traces", () => startTracesService(config.traces!));
  const platform = await services.add("platform", () => startPlatform(dispatcherStorage, { ...config, tracer: traces?.tracer }, {
    onWaiting: (address, reason) => logger.warn({ address, reason }, "waiting for the database"),
  }));
  await services.add("dispatcher", () => startDispatcher(config, logger, platform.runtime, traces));
  return (message, fields) => logger.info(fields ?? {}, message);
}, (error) => error instanceof ConfigError, (error) => error instanceof DatabaseUnreachable || isSecretKeyRefusal(error));
