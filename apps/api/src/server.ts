import { createServer, type Server } from "node:http";
import { createOpsServer, listenOn } from "@platter/ops";
import { randomUUID } from "node:crypto";
import { ApiInstances, Housekeeping, pingDatabase } from "@platter/persistence";
import type { Logger } from "pino";
import { createApiApp } from "./app.ts";
import { answerBelowKoa } from "./http-edge.ts";
import { type ApiObservability, createApiObservability } from "./observability.ts";
import { KeyRateLimits } from "./rate-limits.ts";
import type { ApiConfig } from "./config.ts";
import type { PlatformRuntime } from "@platter/persistence";

/** A running API: its two ports and a graceful stop. */
export interface RunningApi {
  readonly port: number;
  readonly opsPort: number;
  /** Stops accepting and lets in-flight requests finish (up to the grace period); the platform closes the pool. */
  readonly stop: () => Promise<void>;
}

const closeGracefully = (server: Server, graceMs: number): Promise<void> =>
  new Promise((done) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => (clearTimeout(force), done()));
    server.closeIdleConnections();
  });

/**
 * The public API's HTTP server: Koa for requests, `answerBelowKoa` for what the parser refuses.
 * `drain()` makes every further response close its keep-alive connection.
 */
export const createApiServer = (
  runtime: PlatformRuntime,
  logger: Logger,
  limits: KeyRateLimits,
  observability: ApiObservability,
): { server: Server; drain: () => void } => {
  const handle = createApiApp(runtime, logger, limits, observability).callback();
  let draining = false;
  const server = createServer((req, res) => {
    if (draining) res.setHeader("connection", "close");
    return handle(req, res);
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  answerBelowKoa(server);
  return { server, drain: () => (draining = true) };
};

/** How often an instance announces itself, and when the others forget one that stopped announcing. */
const HEARTBEAT_MS = 5_000;
const STALE_AFTER_MS = 3 * HEARTBEAT_MS;

/**
 * Announces this instance in the database now and every few seconds, and shares the per-key
 * limits between the instances live. A failed heartbeat (the database is away) keeps the last share.
 */
const shareLimitsWithOtherInstances = async (runtime: PlatformRuntime, limits: KeyRateLimits, logger: Logger) => {
  const id = randomUUID();
  const beat = () =>
    runtime.runPromise(ApiInstances.use((i) => i.heartbeat(id, STALE_AFTER_MS))).then(
      (count) => limits.shareBetween(count),
      (error: unknown) => logger.debug({ err: error }, "heartbeat failed"),
    );
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  timer.unref();
  return {
    leave: async () => {
      clearInterval(timer);
      await runtime.runPromise(ApiInstances.use((i) => i.leave(id))).catch(() => {});
    },
  };
};

/** Serves the public API and its ops port on the platform's storage services. */
export const startApi = async (config: ApiConfig, logger: Logger, runtime: PlatformRuntime): Promise<RunningApi> => {
  const limits = new KeyRateLimits(config.rateLimits);
  const instances = await shareLimitsWithOtherInstances(runtime, limits, logger);
  const observability = createApiObservability(runtime, logger, config.logRequests);
  const { server: api, drain } = createApiServer(runtime, logger, limits, observability);
  const ops = createOpsServer({ isReady: () => runtime.runPromise(pingDatabase).then(() => true), metrics: observability.registry });
  // Keys older than the 24-hour window are ignored on lookup; this only reclaims their space.
  const prune = setInterval(
    () => void runtime.runPromise(Housekeeping.use((h) => h.pruneIdempotencyKeys())).catch((err) => logger.warn({ err }, "prune failed")),
    3_600_000,
  );
  prune.unref();
  let port: number;
  let opsPort: number;
  try {
    port = await listenOn(api, config.port, config.host, "PORT");
    opsPort = await listenOn(ops, config.opsPort, config.host, "OPS_PORT");
  } catch (error) {
    clearInterval(prune);
    await instances.leave();
    api.close();
    ops.close();
    throw error;
  }
  logger.info({ port, opsPort }, "api listening");
  return {
    port,
    opsPort,
    stop: async () => {
      drain();
      clearInterval(prune);
      await instances.leave();
      await closeGracefully(api, config.shutdownGraceMs);
      await new Promise((done) => ops.close(done));
    },
  };
};
