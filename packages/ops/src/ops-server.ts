import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError } from "./config.ts";
import type { Registry } from "prom-client";

/**
 * The operations port, kept apart from any public port so probes and scrapers need no key.
 * `/healthz`: the process is up. `/readyz`: it can reach its database. `/metrics`: Prometheus
 * text format, when a registry is given.
 */
export interface OpsEndpoints {
  readonly isReady: () => Promise<boolean>;
  readonly metrics?: Registry;
}

/** `/readyz` answers within this, ready or not. */
export const READY_WITHIN_MS = 900;

export const createOpsServer = ({ isReady, metrics }: OpsEndpoints): Server =>
  createServer(async (req, res) => {
    const send = (status: number, body: string, type = "application/json; charset=utf-8") => {
      res.writeHead(status, { "content-type": type }).end(body);
    };
    if (req.method === "GET" && req.url === "/healthz") return send(200, '{"status":"ok"}');
    if (req.method === "GET" && req.url === "/readyz") {
      // Within a second, whatever the database does: a probe that hangs is a "no".
      let timer: NodeJS.Timeout | undefined;
      const ready = await Promise.race([
        isReady().catch(() => false),
        new Promise<false>((done) => (timer = setTimeout(() => done(false), READY_WITHIN_MS))),
      ]);
      clearTimeout(timer);
      return send(ready ? 200 : 503, JSON.stringify({ status: ready ? "ready" : "database unavailable" }));
    }
    if (req.method === "GET" && req.url === "/metrics" && metrics) {
      // A gauge read from the database fails while it is away: the scrape is answered 503 (Prometheus
      // marks the target down for it). Never a rejection: an unhandled one would end the process.
      const text = await metrics.metrics().catch(() => undefined);
      return text === undefined ? send(503, '{"status":"metrics unavailable"}') : send(200, text, metrics.contentType);
    }
    send(404, '{"error":"Unknown endpoint"}');
  });

/**
 * Starts `server` listening on `host:port` and resolves with the port it got. A port that is taken
 * (or not ours to bind) is a configuration mistake, reported in one line naming the variable that
 * chose it, never a stack trace.
 */
export const listenOn = (server: Server, port: number, host: string, variable: string): Promise<number> =>
  new Promise((done, fail) => {
    const refused = (error: NodeJS.ErrnoException) => {
      const why = error.code === "EADDRINUSE" ? "is already in use" : error.code === "EACCES" ? "may not be used by this process" : undefined;
      fail(why === undefined ? error : new ConfigError(`${variable}: port ${port} on ${host} ${why}; set ${variable} to a free port`));
    };
    server.once("error", refused);
    server.listen(port, host, () => {
      server.removeListener("error", refused);
      done((server.address() as AddressInfo).port);
    });
  });
