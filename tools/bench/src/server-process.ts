import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiObservability, createApiServer, KeyRateLimits, loadApiConfig, REQUEST_HISTORY_DEFAULTS, RequestLogWriter, UNTHROTTLED } from "@platter/api";
import { createLogger } from "@platter/ops";
import { openPlatform } from "@platter/persistence";
import { startReferenceServer } from "./reference-server.ts";

/**
 * One server under load, in a process of its own so that neither the load generator nor the
 * other server shares its event loop or its heap: `BENCH_SERVER=api` is the real API (Koa app,
 * the platform's storage services, rate limiter, metrics, request log to /dev/null), `BENCH_SERVER=reference` the hand-written reference.
 * Both listen on 127.0.0.1 with a pool of `BENCH_POOL_SIZE`. Started by main.ts with `fork`; reports
 * its port over IPC and stops when told to or when its parent goes away.
 */

export type ServerKind = "api" | "reference";

const kind = process.env["BENCH_SERVER"];
const databaseUrl = process.env["BENCH_DATABASE_URL"];
const poolSize = Number(process.env["BENCH_POOL_SIZE"] ?? 10);
if ((kind !== "api" && kind !== "reference") || !databaseUrl || process.send === undefined) {
  throw new Error("server-process.ts is started by the benchmark (main.ts)");
}

const listen = (server: Server): Promise<number> =>
  new Promise((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => done((server.address() as AddressInfo).port));
  });

const startApi = async () => {
  // The API process's own database settings (generic plans included), on the bench's server.
  const runtime = await openPlatform({ ...loadApiConfig({ DATABASE_URL: databaseUrl }), poolSize });
  // As in production: the rate limiter runs (with limits the load never reaches), metrics are kept,
  // every request is logged by the processes' own logger (to /dev/null, so the cost of the line is paid, not of a terminal), and
  // the organizations' request log keeps its default sample of successes, written once a second.
  const logger = createLogger("platter-api", "info", "/dev/null");
  const requestLog = new RequestLogWriter(runtime, logger, REQUEST_HISTORY_DEFAULTS);
  requestLog.start();
  const { server } = createApiServer(runtime, logger, new KeyRateLimits(UNTHROTTLED), createApiObservability(runtime, logger, true, requestLog));
  const port = await listen(server);
  return {
    port,
    stop: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await requestLog.stop();
      await runtime.dispose();
    },
  };
};

const running = kind === "api" ? await startApi() : await startReferenceServer(databaseUrl, poolSize);

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
