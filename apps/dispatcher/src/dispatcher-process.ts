import type { AddressInfo } from "node:net";
import { createOpsServer } from "@platter/ops";
import { listenForOutbox, makeWebhookStore, migrate, openOrm, startLocalPostgres } from "@platter/persistence";
import { WebhookDispatcher } from "@platter/webhooks";
import type { Logger } from "pino";
import type { DispatcherConfig } from "./config.ts";
import { createDispatcherMetrics } from "./metrics.ts";

/** A running dispatcher: its ops port and a graceful stop. */
export interface RunningDispatcher {
  readonly opsPort: number;
  /** Claims nothing more, finishes in-flight attempts, records them, closes the pool. */
  readonly stop: () => Promise<void>;
}

/** Opens the database, migrates, and starts delivering; wakes on NOTIFY, polls as a fallback. */
export const startDispatcher = async (config: DispatcherConfig, logger: Logger): Promise<RunningDispatcher> => {
  const local = config.databaseUrl ? undefined : await startLocalPostgres(config.dataDir, config.localPostgresPort);
  const url = config.databaseUrl ?? local!.url;
  const orm = await openOrm(url, { poolSize: config.poolSize });
  await migrate(orm);
  const store = makeWebhookStore(orm);
  const metrics = createDispatcherMetrics(store);
  const dispatcher = new WebhookDispatcher(store, config, {
    attempted: (outcome, durationMs, delivery) => {
      metrics.observer.attempted?.(outcome, durationMs, delivery);
      logger.debug({ delivery: delivery.id, attempt: delivery.attempt, outcome, durationMs }, "attempt");
    },
    failedLoop: (error) => {
      metrics.observer.failedLoop?.(error);
      logger.error({ err: error }, "dispatcher loop error");
    },
  });
  const listener = listenForOutbox(url, () => dispatcher.wake(), (error) => logger.warn({ err: error }, "outbox listener"));
  dispatcher.start();
  const ops = createOpsServer({
    isReady: () => orm.em.getConnection().execute("select 1").then(() => true),
    metrics: metrics.registry,
  });
  await new Promise<void>((done) => ops.listen(config.opsPort, config.host, done));
  const opsPort = (ops.address() as AddressInfo).port;
  logger.info({ opsPort, concurrency: config.concurrency, allowPrivateNetworks: config.allowPrivateNetworks }, "dispatcher running");
  return {
    opsPort,
    stop: async () => {
      await listener.close();
      await dispatcher.stop();
      await new Promise((done) => ops.close(done));
      await orm.close(true);
      await local?.release();
    },
  };
};
