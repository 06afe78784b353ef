import { createServer, type Server } from "node:http";
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

export const createOpsServer = ({ isReady, metrics }: OpsEndpoints): Server =>
  createServer(async (req, res) => {
    const send = (status: number, body: string, type = "application/json; charset=utf-8") => {
      res.writeHead(status, { "content-type": type }).end(body);
    };
    if (req.method === "GET" && req.url === "/healthz") return send(200, '{"status":"ok"}');
    if (req.method === "GET" && req.url === "/readyz") {
      const ready = await isReady().catch(() => false);
      return send(ready ? 200 : 503, JSON.stringify({ status: ready ? "ready" : "database unavailable" }));
    }
    if (req.method === "GET" && req.url === "/metrics" && metrics) {
      return send(200, await metrics.metrics(), metrics.contentType);
    }
    send(404, '{"error":"Unknown endpoint"}');
  });
