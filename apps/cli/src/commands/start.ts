import { createLogger, loadApiConfig, startApi } from "@platter/api";
import { loadDispatcherConfig, startDispatcher } from "@platter/dispatcher";
import { defineCommand } from "citty";
import { openPlatformDatabase, withMigratedOrm } from "../database-session.ts";
import { CommandFailed } from "../failures.ts";
import { prepareFirstRun, welcomeText } from "../first-run.ts";
import { createServiceGroup, shutdownSignal } from "../services.ts";

/**
 * `platter start` (what `npm start` runs): the database (embedded unless `DATABASE_URL` is set),
 * migrations, demo data on first run, then the API and the webhook dispatcher in this process until SIGTERM or SIGINT, which
 * drain it and stop the database this process started. The launcher owns the database so that
 * every service beside the API (the webhook dispatcher) shares it and it stops after all of them.
 */
/** Local development delivers to localhost receivers unless the operator said otherwise. */
const localDispatcherEnv = () => ({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", ...process.env });
const localDispatcherConfig = () => loadDispatcherConfig(localDispatcherEnv());
const allowsPrivateNetworks = () => localDispatcherConfig().allowPrivateNetworks;

export const startCommand = defineCommand({
  meta: { name: "start", description: "Run Platter locally: database, demo data on first run, the API and the webhook dispatcher" },
  run: async () => {
    const shutdown = shutdownSignal();
    const config = loadApiConfig();
    const logger = createLogger("platter", config.logLevel);
    const database = await openPlatformDatabase(config);
    const services = createServiceGroup();
    try {
      const welcome = await withMigratedOrm(database.url, prepareFirstRun);
      const api = await services.add("api", () => startApi({ ...config, databaseUrl: database.url }, logger));
      const dispatcher = await services.add("dispatcher", () =>
        startDispatcher({ ...localDispatcherConfig(), databaseUrl: database.url }, logger),
      );
      process.stdout.write(
        `Webhook dispatcher running (metrics: http://localhost:${dispatcher.opsPort}/metrics).\n` +
          (allowsPrivateNetworks()
            ? "WEBHOOK_ALLOW_PRIVATE_NETWORKS=true for local development: webhooks may target localhost and private networks.\n"
            : ""),
      );
      process.stdout.write(
        welcomeText(welcome, `http://localhost:${api.port}/v1`, `http://localhost:${api.opsPort}/healthz`),
      );
      const ending = await Promise.race([
        shutdown.then((signal) => ({ signal, crashed: undefined })),
        services.unexpectedEnd().then((crashed) => ({ signal: undefined, crashed })),
      ]);
      logger.info(ending, "stopping");
      await services.stopAll((service, error) => logger.error({ service, err: error }, "stop failed"));
      logger.info("stopped");
      if (ending.crashed !== undefined) throw new CommandFailed(`${ending.crashed} stopped unexpectedly`);
    } finally {
      await services.stopAll((service, error) => logger.error({ service, err: error }, "stop failed"));
      await database.release();
    }
  },
});
