import { createServer, type Server } from "node:http";
import { createOpsServer, KeyRateLimits, listenOn, type TraceExport } from "@platter/ops";
import { announceInstance, HistoryPartitions, Housekeeping, pingDatabase, REQUEST_HISTORY, WEBHOOK_HISTORY } from "@platter/persistence";
import type { Logger } from "pino";
import { type ApiAppOptions, createApiApp } from "./app.ts";
import { answerBelowKoa } from "./http-edge.ts";
import { type ApiObservability, createApiObservability } from "./observability.ts";
import { RequestLogWriter } from "./request-log.ts";
import type { ApiConfig } from "./config.ts";
import type { RequestRuntime } from "@platter/persistence";

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
  runtime: RequestRuntime,
  logger: Logger,
  limits: KeyRateLimits,
  observability: ApiObservability,
  options: ApiAppOptions = {},
): { server: Server; drain: () => void } => {
  const handle = createApiApp(runtime, logger, limits, observability, options).callback();
  let draining = false;
  const server = createServer((req, res) => {
    if (draining) res.setHeader("connection", "close");
    return handle(req, res);
  });
  server.keepAliveTimeout = 65_000; // longer than common load-balancer idle timeouts
  answerBelowKoa(server);
  return { server, drain: () => (draining = true) };
};

/** Batch size for retention's turn on the request log (`forgetExpired`): it has no deliveries to settle, so only its partitions go. */
const REQUEST_HISTORY_BATCH = 500;

/** Serves the public API and its ops port on the platform's storage services. */
export const startApi = async (config: ApiConfig, logger: Logger, runtime: RequestRuntime, traces?: TraceExport): Promise<RunningApi> => {
  const limits = new KeyRateLimits(config.rateLimits);
  // Rate limits are shared out between the API instances live.
  const instances = await announceInstance((program) => runtime.runPromise(program), "api", (live) => limits.shareBetween(live));
  const requestLog = new RequestLogWriter(runtime, logger, config.requestHistory);
  requestLog.start();
  const observability = createApiObservability(runtime, logger, config.logRequests, requestLog, traces);
  const { server: api, drain } = createApiServer(runtime, logger, limits, observability, {
    trustProxy: config.trustProxy,
    requestDatabaseTimeoutMs: config.requestDatabaseTimeoutMs,
    ...(config.replicas.urls.length === 0 ? {} : { replicaReads: { readYourWritesMs: config.replicas.readYourWritesMs } }),
  });
  const ops = createOpsServer({ isReady: () => runtime.runPromise(pingDatabase).then(() => true), metrics: observability.registry });
  // Keys older than the 24-hour window are ignored on lookup; this only reclaims their space.
  // Webhook history's and the request log's partitions made ahead now and every 2 widths, at most hourly (the dispatcher's sweep makes webhook history's too):
  // a write never finds none. The request log's expired partitions go whole on the same turn (`forgetExpired`: one API instance at a time, the others skip that turn).
  const makePartitionsAhead = () =>
    Promise.all([
      runtime.runPromise(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, config.webhookHistory.partitionMs, config.webhookHistory.aheadMs))),
      runtime.runPromise(HistoryPartitions.use((h) => h.makeAhead(REQUEST_HISTORY, config.requestHistory.partitionMs, config.requestHistory.aheadMs))),
    ]);
  // Made well ahead, so one not made now (a lock not had within its timeout) is made at the next try.
  await makePartitionsAhead().catch((err) => logger.warn({ err }, "history partitions not made ahead at start: tried again at the next turn"));
  const forgetExpiredRequestLog = () =>
    runtime.runPromise(HistoryPartitions.use((h) => h.forgetExpired(REQUEST_HISTORY, config.requestHistory.retentionMs, REQUEST_HISTORY_BATCH)));
  const prune = setInterval(
    () =>
      void Promise.all([runtime.runPromise(Housekeeping.use((h) => h.pruneIdempotencyKeys())), makePartitionsAhead(), forgetExpiredRequestLog()])
        .catch((err) => logger.warn({ err }, "prune failed")),
    Math.min(config.webhookHistory.makeAheadEveryMs, config.requestHistory.makeAheadEveryMs),
  );
  prune.unref();
  let port: number;
  let opsPort: number;
  try {
    port = await listenOn(api, config.port, config.host, "PORT");
    opsPort = await listenOn(ops, config.opsPort, config.opsHost, "OPS_PORT");
  } catch (error) {
    clearInterval(prune);
    await requestLog.stop();
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
      // After the last response: its request is in the buffer.
      await requestLog.stop();
      await new Promise((done) => ops.close(done));
    },
  };
};
