import { createServer, type Server } from "node:http";

/**
 * The operations port, kept apart from the public one so probes never need a key and the public
 * port serves the spec and nothing else. `/healthz`: the process is up. `/readyz`: it can reach
 * its database.
 */
export const createOpsServer = (isReady: () => Promise<boolean>): Server =>
  createServer(async (req, res) => {
    const send = (status: number, body: object) => {
      res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
    };
    if (req.method !== "GET") return send(404, { error: "Unknown endpoint" });
    if (req.url === "/healthz") return send(200, { status: "ok" });
    if (req.url === "/readyz") {
      const ready = await isReady().catch(() => false);
      return send(ready ? 200 : 503, { status: ready ? "ready" : "database unavailable" });
    }
    send(404, { error: "Unknown endpoint" });
  });
