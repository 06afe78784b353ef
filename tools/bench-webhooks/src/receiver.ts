import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifySignature } from "@platter/domain";

/**
 * The webhook receiver both systems deliver to: node:http on 127.0.0.1 with keep-alive, answering
 * 200 (or `status`) at once (or after `holdMs`). It notes when each envelope id (from the body) first arrived, by
 * this machine's clock, and counts repeats and bad signatures so a run that delivers wrongly cannot
 * pass. It may listen on several ports: each port is an origin of its own, for endpoints that must
 * not share the HTTP client's connections. It counts envelopes, not deliveries: a message delivered
 * to several of its endpoints arrives once and then as duplicates, so give each endpoint its own messages.
 */
export interface Receiver {
  /** The first origin's URL. */
  readonly url: string;
  /** One URL per origin (port), the first being `url`. */
  readonly urls: readonly string[];
  /** Envelope id → `Date.now()` at its first arrival, since the last `reset`. */
  readonly arrivals: ReadonlyMap<string, number>;
  /** Deliveries of an envelope id already seen, since the last `reset`. */
  readonly duplicates: () => number;
  /** Requests whose signature did not match the body, since the last `reset`. */
  readonly badSignatures: () => number;
  /**
   * Forgets every arrival and sets the signing secret to check from now on: one for every origin,
   * or one per origin (in the order of `urls`), for endpoints of different secrets.
   */
  readonly reset: (secret: string | readonly string[]) => void;
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

/** How a receiver listens and answers. */
export interface ReceiverOptions {
  /** Ports (origins) to listen on; 1 unless told. */
  readonly origins?: number;
  /** How long each request is held before its 200; 0 (at once) unless told. */
  readonly holdMs?: number;
  /** The status it answers; 200 unless told (500: an endpoint that keeps failing). */
  readonly status?: number;
  /** Told each envelope's body at its first arrival, with the arrival's `Date.now()`. */
  readonly onFirstArrival?: (body: Buffer, at: number) => void;
}

const listening = async (server: Server): Promise<number> => {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return (server.address() as AddressInfo).port;
};

const closing = (server: Server): Promise<void> =>
  new Promise((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });

/** Starts the receiver on free ports of 127.0.0.1; deliveries are checked against `signatureHeader`. */
export const startReceiver = async (signatureHeader: string, options: ReceiverOptions = {}): Promise<Receiver> => {
  const holdMs = options.holdMs ?? 0;
  const status = options.status ?? 200;
  const arrivals = new Map<string, number>();
  let duplicates = 0;
  let badSignatures = 0;
  let secrets: readonly string[] = [""];
  let waiter: { count: number; done: () => void; arrived: () => void } | undefined;

  const answer = (response: ServerResponse) => {
    if (!response.destroyed) response.writeHead(status, { "content-type": "text/plain", "content-length": "2" }).end("ok");
  };
  const serverOf = (origin: number) => createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    const at = Date.now();
    void readBody(request).then((body) => {
      const id = envelopeIdOf(body);
      if (id === undefined) return void response.writeHead(400).end();
      const signature = request.headers[signatureHeader];
      const secret = secrets[origin] ?? secrets[0]!;
      if (typeof signature !== "string" || !verifySignature(secret, body, signature)) badSignatures += 1;
      if (arrivals.has(id)) duplicates += 1;
      else {
        arrivals.set(id, at);
        options.onFirstArrival?.(body, at);
        waiter?.arrived();
      }
      if (holdMs === 0) answer(response);
      else {
        const timer = setTimeout(() => answer(response), holdMs);
        response.on("close", () => clearTimeout(timer));
      }
      if (waiter !== undefined && arrivals.size >= waiter.count) waiter.done();
    }, () => response.destroy());
  });
  const servers = Array.from({ length: options.origins ?? 1 }, (_, origin) => serverOf(origin));
  const ports = await Promise.all(servers.map(listening));
  const urls = ports.map((port) => `http://127.0.0.1:${port}/webhooks`);

  return {
    url: urls[0]!,
    urls,
    arrivals,
    duplicates: () => duplicates,
    badSignatures: () => badSignatures,
    reset: (next) => {
      arrivals.clear();
      duplicates = 0;
      badSignatures = 0;
      secrets = typeof next === "string" ? [next] : next;
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
    close: async () => void (await Promise.all(servers.map(closing))),
  };
};

/** An endpoint's server that only holds: see `startHoldingReceiver`. */
export interface HoldingReceiver {
  /** Its URL; endpoints may add paths below it (`${url}/7`), all on this one origin. */
  readonly url: string;
  /** Requests answered (200) so far. */
  readonly answered: () => number;
  readonly close: () => Promise<void>;
}

/**
 * An endpoint in trouble, or merely slow: it holds every request `holdMs` before answering 200 (or,
 * longer than the timeout, never in time). It checks nothing and notes no arrival; it counts answers.
 */
export const startHoldingReceiver = async (holdMs: number): Promise<HoldingReceiver> => {
  let answered = 0;
  const server = createServer((request, response) => {
    request.resume();
    const timer = setTimeout(() => {
      answered += 1;
      response.writeHead(200).end();
    }, holdMs);
    response.on("close", () => clearTimeout(timer));
  });
  const port = await listening(server);
  return { url: `http://127.0.0.1:${port}/hook`, answered: () => answered, close: () => closing(server) };
};
