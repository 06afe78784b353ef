import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small HTTP proxy on 127.0.0.1 in front of the real API, for what the API itself never does on
 * demand: answer 429 or 503, drop the connection, stall, or lose the response of a request it
 * did forward. Queued faults are used one per request, then requests are forwarded unchanged.
 * Every request is recorded, so tests can see what the SDK sent (e.g. its Idempotency-Key).
 */

/** What the proxy does with one request instead of (or after) forwarding it. */
export type Fault =
  /** Answers this status with `{"error": …}` and these headers; nothing reaches the API. */
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>> }
  /** Destroys the connection without answering. */
  | "disconnect"
  /** Never answers (until the proxy closes). */
  | "stall"
  /** Forwards the request to the API, then throws the answer away and answers 503: a lost response. */
  | "forward-then-503";

export interface ProxiedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** What the proxy did: `forwarded`, or the fault it applied. */
  readonly outcome: "forwarded" | Fault;
  /** What the API answered, for a request that reached it. */
  upstream?: { readonly status: number; readonly headers: Headers };
}

export interface FaultProxy {
  /** The proxy's base URL with the same path as the upstream base URL (`http://127.0.0.1:…/v1`). */
  readonly baseUrl: string;
  /** Every request received, in order. */
  readonly requests: ProxiedRequest[];
  /** Queues faults for the next requests, one each. */
  readonly failNext: (...faults: Fault[]) => void;
  /** Forgets recorded requests and queued faults. */
  readonly reset: () => void;
  readonly close: () => Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host", "content-encoding"]);

const readBody = async (request: AsyncIterable<Buffer>): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
};

/** Starts a proxy to `upstreamBaseUrl` (an origin plus a path such as `/v1`). */
export const startFaultProxy = async (upstreamBaseUrl: string): Promise<FaultProxy> => {
  const upstream = new URL(upstreamBaseUrl);
  const requests: ProxiedRequest[] = [];
  let faults: Fault[] = [];
  let faultCount = 0;

  const forward = async (method: string, url: string, headers: IncomingHttpHeaders, body: string): Promise<Response> => {
    const outgoing = new Headers();
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) outgoing.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    return fetch(new URL(url, upstream.origin), { method, headers: outgoing, body: method === "GET" ? undefined : body });
  };

  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const fault = faults.shift();
    const record: ProxiedRequest = { method, url, headers: req.headers, body, outcome: fault ?? "forwarded" };
    requests.push(record);
    const answerFault = (status: number, headers: Readonly<Record<string, string>> = {}) => {
      res.writeHead(status, { "content-type": "application/json", "x-request-id": `proxy_${++faultCount}`, ...headers });
      res.end(JSON.stringify({ error: `Injected ${status}` }));
    };
    try {
      if (fault === "disconnect") return void req.socket.destroy();
      if (fault === "stall") return;
      if (fault === "forward-then-503") {
        const lost = await forward(method, url, req.headers, body);
        await lost.arrayBuffer();
        record.upstream = { status: lost.status, headers: lost.headers };
        return answerFault(503);
      }
      if (fault !== undefined) return answerFault(fault.status, fault.headers);
      const response = await forward(method, url, req.headers, body);
      record.upstream = { status: response.status, headers: response.headers };
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (!HOP_BY_HOP.has(name)) headers[name] = value;
      });
      res.writeHead(response.status, headers);
      res.end(Buffer.from(await response.arrayBuffer()));
    } catch (error) {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `proxy: ${String(error)}` }));
    }
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/+$/, "")}`,
    requests,
    failNext: (...next) => void faults.push(...next),
    reset: () => {
      requests.length = 0;
      faults = [];
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
};
