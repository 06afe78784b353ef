import { Effect } from "effect";
import { createOpsServer, listenOn } from "@platter/ops";
import { DeliveryQueue, pingDatabase, type PlatformRuntime } from "@platter/persistence";
import { WebhookDispatcher } from "@platter/webhooks";
import type { Logger } from "pino";
import type { DispatcherConfig } from "./config.ts";
import { createDispatcherMetrics } from "./metrics.ts";

/** A running dispatcher: its ops port and a graceful stop. */
export interface RunningDispatcher {
  readonly opsPort: number;
  /** Claims nothing more, finishes in-flight attempts and records them; the platform closes the pool. */
  readonly stop: () => Promise<void>;
}

/** Starts delivering on the platform's delivery queue; wakes on NOTIFY, polls as a fallback. */
export const startDispatcher = async (config: DispatcherConfig, logger: Logger, runtime: PlatformRuntime): Promise<RunningDispatcher> => {
  const store = await runtime.runPromise(DeliveryQueue.use(Effect.succeed));
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
  const ops = createOpsServer({
    isReady: () => runtime.runPromise(pingDatabase).then(() => true),
    metrics: metrics.registry,
  });
  // The port first: a taken one stops the start before any delivery is claimed.
  const opsPort = await listenOn(ops, config.opsPort, config.host, "DISPATCHER_OPS_PORT");
  const listener = store.listen(() => dispatcher.wake(), (error) => logger.warn({ err: error }, "outbox listener"));
  dispatcher.start();
  logger.info({ opsPort, concurrency: config.concurrency, allowPrivateNetworks: config.allowPrivateNetworks }, "dispatcher running");
  return {
    opsPort,
    stop: async () => {
      await listener.close();
      await dispatcher.stop();
      await new Promise((done) => ops.close(done));
    },
  };
};
