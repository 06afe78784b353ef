import { spawn } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { DueDelivery } from "@platter/domain";
import { afterEach, describe, expect, it } from "vitest";
import { type AttemptSettings, attemptDelivery, createDeliveryAgent } from "../src/delivery-attempt.ts";
import { startDnsResponder } from "../src/testing/dns-responder.ts";
import { WebhookResolver } from "../src/webhook-resolver.ts";

/** One signed POST against real HTTP receivers on 127.0.0.1. */

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
}

interface Receiver {
  readonly url: string;
  readonly received: Received[];
  readonly close: () => Promise<void>;
}

/** An HTTP server recording every request's exact body bytes; `answer` writes the response. */
const startReceiver = async (answer: (res: ServerResponse, req: IncomingMessage) => void): Promise<Receiver> => {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, rawBody: Buffer.concat(chunks) });
      answer(res, req);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
};

/** A port nothing listens on: bound once, then released. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
};

/** HMAC-SHA256 computed by Python's hmac module, independently of our code, over the exact bytes. */
const pythonHmacHex = (secret: string, rawBody: Buffer): Promise<string> =>
  new Promise((done, fail) => {
    const script = "import hmac, hashlib, sys; print(hmac.new(sys.argv[1].encode(), sys.stdin.buffer.read(), hashlib.sha256).hexdigest())";
    const child = spawn("python3", ["-c", script, secret], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? done(out.trim()) : fail(new Error(`python3 exited ${code}`))));
    child.stdin.end(rawBody);
  });

const deliveryTo = (url: string, overrides: Partial<DueDelivery> = {}): DueDelivery => ({
  id: 1,
  organizationId: 1,
  endpointId: 1,
  url,
  origin: new URL(url).origin,
  secret: "whsec_test-secret",
  envelopeId: "evt_0123456789abcdef",
  createdAt: "2026-11-28T08:00:00.000Z",
  body: JSON.stringify({
    id: "evt_0123456789abcdef",
    type: "client.created",
    created_at: "2026-01-02T03:04:05.678Z",
    data: { id: 7, name: "Zoë's Café — “quoted” ✓" },
  }),
  attempt: 1,
  leaseToken: "00000000-0000-0000-0000-000000000000",
  probe: false,
  ...overrides,
});

const settings = (overrides: Partial<AttemptSettings> = {}): AttemptSettings => ({
  signatureHeader: "x-platter-signature",
  timeoutMs: 2000,
  allowPrivateNetworks: true,
  ...overrides,
});

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts a receiver and closes it after the test. */
const receiver = async (answer: (res: ServerResponse, req: IncomingMessage) => void) => {
  const started = await startReceiver(answer);
  cleanups.push(started.close);
  return started;
};

/** Sends one attempt through a fresh agent, closed after the test. */
const attempt = async (delivery: DueDelivery, attemptSettings: AttemptSettings) => {
  const agent = createDeliveryAgent(attemptSettings);
  cleanups.push(() => agent.close());
  return attemptDelivery(agent, delivery, attemptSettings);
};

describe("attemptDelivery", () => {
  it("POSTs the exact body, signed with an HMAC that Python computes identically, and succeeds on 200", async () => {
    const fiveKiB = "x".repeat(5 * 1024);
    const target = await receiver((res) => res.writeHead(200, { "content-type": "text/plain" }).end(fiveKiB));
    const delivery = deliveryTo(target.url);

    const result = await attempt(delivery, settings());

    expect(result).toMatchObject({ outcome: "succeeded", statusCode: 200, error: undefined });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.startedAt).toBeInstanceOf(Date);
    expect(Buffer.byteLength(result.responseBody!)).toBe(1024);
    expect(result.responseBody).toBe(fiveKiB.slice(0, 1024));

    expect(target.received).toHaveLength(1);
    const [request] = target.received;
    expect(request!.method).toBe("POST");
    expect(request!.url).toBe("/hooks");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.rawBody.equals(Buffer.from(delivery.body, "utf8"))).toBe(true);
    const signature = request!.headers["x-platter-signature"];
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signature).toBe(await pythonHmacHex(delivery.secret, request!.rawBody));
  });

  it("uses the configured signature header name", async () => {
    const target = await receiver((res) => res.writeHead(204).end());
    const delivery = deliveryTo(target.url);

    const result = await attempt(delivery, settings({ signatureHeader: "x-acme-signature" }));

    expect(result).toMatchObject({ outcome: "succeeded", statusCode: 204 });
    const headers = target.received[0]!.headers;
    expect(headers["x-platter-signature"]).toBeUndefined();
    expect(headers["x-acme-signature"]).toBe(await pythonHmacHex(delivery.secret, target.received[0]!.rawBody));
  });

  it("keeps a short response body whole", async () => {
    const target = await receiver((res) => res.writeHead(200).end("ok"));
    expect((await attempt(deliveryTo(target.url), settings())).responseBody).toBe("ok");
  });

  it("keeps the first 1,024 bytes of a long body and does not wait for the rest", async () => {
    // 2,048 bytes, then the body never ends: the attempt is over once its first 1,024 bytes are in.
    const target = await receiver((res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("a".repeat(1000) + "b".repeat(1048));
    });
    const result = await attempt(deliveryTo(target.url), settings({ timeoutMs: 5_000 }));
    expect(result).toMatchObject({ outcome: "succeeded", statusCode: 200, error: undefined, responseBody: "a".repeat(1000) + "b".repeat(24) });
  });

  it("keeps the status of an answer whose body does not end within the timeout, without its body", async () => {
    const target = await receiver((res) => {
      res.writeHead(503);
      res.write("partial");
    });
    const result = await attempt(deliveryTo(target.url), settings({ timeoutMs: 300 }));
    expect(result).toMatchObject({ outcome: "failed", statusCode: 503, error: undefined, responseBody: undefined });
  });

  it("fails on 500 and keeps the status and body", async () => {
    const target = await receiver((res) => res.writeHead(500).end("boom"));
    const result = await attempt(deliveryTo(target.url), settings());
    expect(result).toMatchObject({ outcome: "failed", statusCode: 500, error: undefined, responseBody: "boom" });
  });

  it("reports 410 as gone", async () => {
    const target = await receiver((res) => res.writeHead(410).end());
    const result = await attempt(deliveryTo(target.url), settings());
    expect(result).toMatchObject({ outcome: "gone", statusCode: 410 });
  });

  it("fails on 302 without following the redirect", async () => {
    const elsewhere = await receiver((res) => res.writeHead(200).end());
    const target = await receiver((res) => res.writeHead(302, { location: elsewhere.url }).end());
    const result = await attempt(deliveryTo(target.url), settings());
    expect(result).toMatchObject({ outcome: "failed", statusCode: 302 });
    expect(target.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it("fails with a timeout error when the receiver answers after the timeout", async () => {
    const target = await receiver((res) => {
      const late = setTimeout(() => res.writeHead(200).end(), 3000);
      res.on("close", () => clearTimeout(late));
    });
    const result = await attempt(deliveryTo(target.url), settings({ timeoutMs: 300 }));
    expect(result).toMatchObject({ outcome: "failed", statusCode: undefined, responseBody: undefined });
    expect(result.error).toMatch(/time(d)?\s?out/i);
    expect(target.received).toHaveLength(1);
  });

  it("fails with a connection-refused error when nothing listens", async () => {
    const port = await closedPort();
    const result = await attempt(deliveryTo(`http://127.0.0.1:${port}/hooks`), settings());
    expect(result).toMatchObject({ outcome: "failed", statusCode: undefined });
    expect(result.error).toMatch(/^ECONNREFUSED/);
  });

  it("refuses a literal internal address with the guard on, without connecting", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const result = await attempt(deliveryTo(target.url), settings({ allowPrivateNetworks: false }));
    expect(result).toMatchObject({ outcome: "failed", statusCode: undefined, responseBody: undefined });
    expect(result.error).toBe("ESSRF: refused: 127.0.0.1 is not allowed: webhooks are sent only to public internet addresses");
    expect(target.received).toHaveLength(0);
  });

  it.each([
    ["[::127.0.0.1]", "::7f00:1"],
    ["[::ffff:0:127.0.0.1]", "::ffff:0:7f00:1"],
    ["[64:ff9b::127.0.0.1]", "64:ff9b::7f00:1"],
    ["[64:ff9b:1::10.0.0.1]", "64:ff9b:1::a00:1"],
    ["[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "2001:0:4136:e378:8000:63bf:3fff:fdd2"],
    ["[2002:7f00:1::1]", "2002:7f00:1::1"],
  ])("refuses the IPv6 spelling %s of an internal address at attempt time, without connecting", async (host, address) => {
    const result = await attempt(deliveryTo(`http://${host}:8080/hooks`), settings({ allowPrivateNetworks: false }));
    expect(result).toMatchObject({ outcome: "failed", statusCode: undefined, responseBody: undefined });
    expect(result.error).toBe(`ESSRF: refused: ${address} is not allowed: webhooks are sent only to public internet addresses`);
  });

  it("refuses a host name resolving to loopback with the guard on, without connecting or naming the address", async () => {
    const target = await receiver((res) => res.writeHead(200).end());
    const byName = target.url.replace("127.0.0.1", "localhost");
    const result = await attempt(deliveryTo(byName), settings({ allowPrivateNetworks: false }));
    expect(result).toMatchObject({ outcome: "failed", statusCode: undefined });
    expect(result.error).toBe("ESSRF: refused: localhost is not allowed: webhooks are sent only to public internet addresses");
    expect(target.received).toHaveLength(0);
  });

  it("looks names up through its resolver: a name answered connects, a name whose DNS is dead fails with the lookup's timeout", async () => {
    const dns = await startDnsResponder({ answers: { "hooks.test": { address: "127.0.0.1", ttl: 60 } }, silent: (name) => name === "dead.test" });
    cleanups.push(dns.close);
    const resolver = new WebhookResolver({ servers: [dns.server], timeoutMs: 300, cacheSize: 10, lookupsPerOrganization: 2 });
    cleanups.push(async () => resolver.close());
    const target = await receiver((res) => res.writeHead(204).end());
    const attemptSettings = settings({ timeoutMs: 2000 });
    const agent = createDeliveryAgent(attemptSettings, resolver);
    cleanups.push(() => agent.close());

    const answered = await attemptDelivery(agent, deliveryTo(target.url.replace("127.0.0.1", "hooks.test")), attemptSettings, resolver);
    expect(answered).toMatchObject({ outcome: "succeeded", statusCode: 204 });
    expect(target.received[0]!.headers.host).toMatch(/^hooks\.test:\d+$/);
    // The socket connected to the answer the attempt's lookup had just cached.
    expect(dns.questions("hooks.test", "A")).toBe(1);

    const dead = await attemptDelivery(agent, deliveryTo(target.url.replace("127.0.0.1", "dead.test")), attemptSettings, resolver);
    expect(dead).toMatchObject({ outcome: "failed", statusCode: undefined, responseBody: undefined });
    expect(dead.error).toBe("ETIMEOUT: DNS lookup of dead.test timed out after 300 ms");
    expect(target.received).toHaveLength(1);
  });
});
