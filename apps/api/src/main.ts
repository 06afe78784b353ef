import { ConfigError, loadApiConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { startApi } from "./server.ts";

/** The API process: configuration, start, and a graceful stop on SIGTERM or SIGINT. */
const main = async () => {
  const config = loadApiConfig();
  const logger = createLogger("platter-api", config.logLevel);
  const api = await startApi(config, logger);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "draining");
    await api.stop();
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
