import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@platter/domain";

/**
 * The webhook receiver both systems deliver to: node:http on 127.0.0.1 with keep-alive, answering
 * 200 at once. It notes when each envelope id (from the body) first arrived, by this machine's
 * clock, and counts repeats and bad signatures so a run that delivers wrongly cannot pass.
 */
export interface Receiver {
  readonly url: string;
  /** Envelope id → `Date.now()` at its first arrival, since the last `reset`. */
  readonly arrivals: ReadonlyMap<string, number>;
  /** Deliveries of an envelope id already seen, since the last `reset`. */
  readonly duplicates: () => number;
  /** Requests whose signature did not match the body, since the last `reset`. */
  readonly badSignatures: () => number;
  /** Forgets every arrival and sets the signing secret to check from now on. */
  readonly reset: (secret: string) => void;
  /** Resolves once `count` distinct envelopes have arrived; rejects after `timeoutMs`, or after a minute without a new one. */
  readonly waitFor: (count: number, timeoutMs: number) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** A run that receives nothing new for this long has stalled: fail it rather than wait for the timeout. */
const STALL_MS = 60_000;

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => done(Buffer.concat(chunks)));
    request.on("error", fail);
  });

const envelopeIdOf = (body: Buffer): string | undefined => {
  try {
    const id = (JSON.parse(body.toString("utf8")) as { id?: unknown }).id;
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
};

/** Starts the receiver on a free port of 127.0.0.1; deliveries are checked against `signatureHeader`. */
export const startReceiver = async (signatureHeader: string): Promise<Receiver> => {
  const arrivals = new Map<string, number>();
  let duplicates = 0;
  let badSignatures = 0;
  let secret = "";
  let waiter: { count: number; done: () => void; arrived: () => void } | undefined;

  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const at = Date.now();
    void readBody(request).then((body) => {
      const id = envelopeIdOf(body);
      if (id === undefined) return void response.writeHead(400).end();
      const signature = request.headers[signatureHeader];
      if (typeof signature !== "string" || !verifySignature(secret, body, signature)) badSignatures += 1;
      if (arrivals.has(id)) duplicates += 1;
      else {
        arrivals.set(id, at);
        waiter?.arrived();
      }
      response.writeHead(200, { "content-type": "text/plain", "content-length": "2" }).end("ok");
      if (waiter !== undefined && arrivals.size >= waiter.count) waiter.done();
    }, () => response.destroy());
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    arrivals,
    duplicates: () => duplicates,
    badSignatures: () => badSignatures,
    reset: (next) => {
      arrivals.clear();
      duplicates = 0;
      badSignatures = 0;
      secret = next;
    },
    waitFor: (count, timeoutMs) =>
      new Promise((done, fail) => {
        if (arrivals.size >= count) return done();
        const give = (why: string) => () => {
          clearTimeout(stall);
          clearTimeout(timer);
          waiter = undefined;
          fail(new Error(`receiver saw ${arrivals.size} of ${count} deliveries: ${why}`));
        };
        const timer = setTimeout(give(`not all within ${timeoutMs / 1000} s`), timeoutMs);
        const stall = setTimeout(give(`none new for ${STALL_MS / 1000} s`), STALL_MS);
        waiter = {
          count,
          done: () => (clearTimeout(stall), clearTimeout(timer), (waiter = undefined), done()),
          arrived: () => void stall.refresh(),
        };
      }),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
};
