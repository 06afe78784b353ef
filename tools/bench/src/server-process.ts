import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiObservability, createApiServer, loadApiConfig, REQUEST_HISTORY_DEFAULTS, RequestLogWriter } from "@platter/api";
import { createLogger, KeyRateLimits, readTraceSettings, startTraceExport, type TraceExport, UNTHROTTLED } from "@platter/ops";
import { openPlatform } from "@platter/persistence";
import { TEST_SECRET_KEYS_TEXT } from "@platter/testing";
import pg from "pg";
import { ladderServer } from "./ladder-servers.ts";
import { referenceServer } from "./reference-server.ts";

/**
 * One server under load, in a process of its own so that neither the load generator nor the
 * other servers share its event loop or its heap: `BENCH_SERVER=api` is the real API (Koa app,
 * the platform's storage services, rate limiter, metrics, request log to /dev/null), `BENCH_SERVER=reference` the hand-written reference,
 * `koa` and `koa-edge` the rungs between them (ladder-servers.ts).
 * Each listens on 127.0.0.1 with a pool of `BENCH_POOL_SIZE`. Started by main.ts with `fork`; reports
 * its port over IPC and stops when told to or when its parent goes away.
 */

export type ServerKind = "api" | "reference" | "koa" | "koa-edge";

const kind = process.env["BENCH_SERVER"];
const databaseUrl = process.env["BENCH_DATABASE_URL"];
const poolSize = Number(process.env["BENCH_POOL_SIZE"] ?? 10);
if (!(["api", "reference", "koa", "koa-edge"] as const).includes(kind as ServerKind) || !databaseUrl || process.send === undefined) {
  throw new Error("server-process.ts is started by the benchmark (main.ts)");
}

const listen = (server: Server): Promise<number> =>
  new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done((server.address() as AddressInfo).port));
  });

/** The API process's own database settings (generic plans included), on the bench's server, and its logger (to /dev/null). */
const openApiPlatform = async (traces?: TraceExport) => ({
  runtime: await openPlatform({
    ...loadApiConfig({ DATABASE_URL: databaseUrl, SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT }), poolSize, tracer: traces?.tracer,
  }),
  logger: createLogger("platter-api", "info", "/dev/null"),
});

/** Listens on 127.0.0.1; `stop` closes the server, then `release`s what it answered from. */
const serve = async (server: Server, release: () => Promise<unknown>) => {
  const port = await listen(server);
  const stop = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    await release();
  };
  return { port, stop };
};

const startApi = async () => {
  // As in production: the rate limiter runs (with limits the load never reaches), metrics are kept,
  // every request is logged by the processes' own logger (to /dev/null, so the cost of the line is paid, not of a terminal), and
  // the organizations' request log keeps its default sample of successes, written once a second.
  // Traces as the API process exports them when the bench sets OTEL_EXPORTER_OTLP_ENDPOINT for this server (traces-ab.ts).
  const traceSettings = readTraceSettings(process.env, "platter-api");
  const traces = traceSettings === undefined ? undefined : await startTraceExport(traceSettings);
  const { runtime, logger } = await openApiPlatform(traces);
  const requestLog = new RequestLogWriter(runtime, logger, REQUEST_HISTORY_DEFAULTS);
  requestLog.start();
  const { server } = createApiServer(
    runtime, logger, new KeyRateLimits(UNTHROTTLED), createApiObservability(runtime, logger, true, requestLog, traces),
  );
  return serve(server, async () => {
    await requestLog.stop();
    await runtime.dispose();
    await traces?.close();
  });
};

/**
 * The reference, or a rung of the ladder (ladder-servers.ts). `koa-edge` opens the API's platform
 * only because the API's observability is made from it (its pool gauges read it when scraped,
 * which the bench never does); its requests are answered from `pool`, like the others'.
 */
const startHandWritten = async (kind: "reference" | "koa" | "koa-edge") => {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  if (kind === "reference") return serve(referenceServer(pool), () => pool.end());
  const platform = kind === "koa-edge" ? await openApiPlatform() : undefined;
  return serve(ladderServer(pool, platform && createApiObservability(platform.runtime, platform.logger, true)), async () => {
    await pool.end();
    await platform?.runtime.dispose();
  });
};

const running = kind === "api" ? await startApi() : await startHandWritten(kind as "reference" | "koa" | "koa-edge");

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await running.stop();
  process.disconnect?.();
};
process.on("message", (message) => {
  if (message === "stop") void stop();
});
process.on("disconnect", () => void stop());
process.send(running.port);
