import { createServer, type Server } from "node:http";
import { listenOn } from "@platter/ops";
import type { RequestRuntime } from "@platter/persistence";
import type { Logger } from "pino";
import { createDeveloperAreaApp } from "./app.ts";
import type { DeveloperAreaConfig } from "./config.ts";

/** A running Developer area: its port and a graceful stop. */
export interface RunningDeveloperArea {
  readonly port: number;
  /** Stops accepting, lets in-flight requests finish (at most 10 s); the platform closes the pool. */
  readonly stop: () => Promise<void>;
}

const GRACE_MS = 10_000;

const closeGracefully = (server: Server): Promise<void> =>
  new Promise((done) => {
    const force = setTimeout(() => server.closeAllConnections(), GRACE_MS);
    server.close(() => (clearTimeout(force), done()));
    server.closeIdleConnections();
  });

/** Serves the Developer area on `DEVELOPER_AREA_PORT` with the platform's storage services. */
export const startDeveloperArea = async (
  config: Pick<DeveloperAreaConfig, "developerAreaPort" | "developerAreaUrl" | "frameAncestors" | "host" | "allowPrivateNetworks" | "secretOverlapMs" | "endpointsPerOrganization" | "limits"
    | "signatureHeader" | "listenersPerOrganization" | "rateLimits" | "trustProxy"> & Partial<Pick<DeveloperAreaConfig, "alertRecipientsPerOrganization" | "mailServer">>,
  logger: Logger,
  runtime: RequestRuntime,
): Promise<RunningDeveloperArea> => {
  const app = createDeveloperAreaApp(runtime, config, logger);
  const server = createServer(app.callback());
  const port = await listenOn(server, config.developerAreaPort, config.host, "DEVELOPER_AREA_PORT");
  logger.info({
    port, url: config.developerAreaUrl,
    alertMail: config.mailServer === undefined ? "SMTP_URL unset: alert addresses cannot be added (no confirmation links are mailed)" : `via SMTP from ${config.mailServer.from}`,
  }, "developer area listening");
  return {
    port,
    // Open `platter listen` streams end first (their CLIs reconnect elsewhere); then requests finish.
    stop: () => (app.listenerStreams.endAll(), closeGracefully(server)),
  };
};
