import { loadApiConfig, startApi } from "@platter/api";
import { createSignInLink } from "@platter/application";
import { loadDeveloperAreaConfig, startDeveloperArea } from "@platter/developer-area";
import { loadDispatcherConfig, startDispatcher } from "@platter/dispatcher";
import { createLogger, createServiceGroup, replicaLog, shutdownSignal } from "@platter/ops";
import { startPlatform, storageServices } from "@platter/persistence";
import { defineCommand } from "citty";
import { CommandFailed } from "../failures.ts";
import { linkOrganizationOf, prepareFirstRun, welcomeText } from "../first-run.ts";

/**
 * `platter start` (what `npm start` runs): the platform (the database, embedded unless
 * `DATABASE_URL` is set, one pool, migrations), demo data on first run, then the API, the webhook
 * dispatcher and the Developer area (and a sign-in link to it, on every start) on it until SIGTERM or SIGINT, which drain them and then close
 * the platform (and stop the database this process started).
 */
/** Local development registers and delivers to localhost receivers unless the operator said otherwise. */
const localDispatcherEnv = () => ({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", ...process.env });
const localDispatcherConfig = () => loadDispatcherConfig(localDispatcherEnv());
const allowsPrivateNetworks = () => localDispatcherConfig().allowPrivateNetworks;

export const startCommand = defineCommand({
  meta: { name: "start", description: "Run Platter locally: database, demo data on first run, the API, the webhook dispatcher and the Developer area" },
  run: async () => {
    const shutdown = shutdownSignal();
    const config = loadApiConfig();
    // The Developer area's SSRF guard follows the local dispatcher's: a localhost receiver can be added there too.
    const areaConfig = loadDeveloperAreaConfig(localDispatcherEnv());
    const logger = createLogger("platter", config.logLevel);
    const services = createServiceGroup();
    try {
      const { runtime: platform } = await services.add("platform", () =>
        // One pool for every role: the dispatcher's and the Developer area's statements filter on
        // skewed values, so the API's generic plans stay off here.
        startPlatform(storageServices, { ...config, genericPlans: false }, {
          onCreated: (dataDir) => logger.info({ dataDir }, "created a new local database"),
          onWaiting: (address, reason) => logger.warn({ address, reason }, "waiting for the database"),
          onReplica: replicaLog(logger),
        }),
      );
      const welcome = await prepareFirstRun(platform);
      const api = await services.add("api", () => startApi(config, logger, platform));
      const dispatcher = await services.add("dispatcher", () => startDispatcher(localDispatcherConfig(), logger, platform));
      await services.add("developer-area", () => startDeveloperArea(areaConfig, logger, platform));
      // Every start prints a fresh link (a link works once): beside the demo keys, or the organizations.
      const signInLink = (await createSignInLink(platform, areaConfig.developerAreaUrl, linkOrganizationOf(welcome).id, "cli")).url;
      process.stdout.write(
        `Webhook dispatcher running (metrics: http://localhost:${dispatcher.opsPort}/metrics).\n` +
          (allowsPrivateNetworks()
            ? "WEBHOOK_ALLOW_PRIVATE_NETWORKS=true for local development: webhooks may target localhost and private networks.\n"
            : ""),
      );
      process.stdout.write(
        welcomeText(welcome, `http://localhost:${api.port}/v1`, `http://localhost:${api.opsPort}/healthz`, {
          url: areaConfig.developerAreaUrl,
          signInLink,
        }),
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
    }
  },
});
