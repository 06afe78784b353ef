import { PassThrough } from "node:stream";
import { LocalForwarding } from "@platter/application";
import { type ApiKeyActor, LISTENER_LEASE_MS, LISTENER_REPLACED, type ListenRequest } from "@platter/domain";
import type { ListenerDelivery, OpenedListener, RequestStorage } from "@platter/persistence";
import { signedHeaders } from "@platter/webhooks";
import type { Effect } from "effect";
import type { Context } from "koa";
import type { Logger } from "pino";

/**
 * The open `platter listen` streams of this process: server-sent events on the CLI's own
 * connection. Each polls its listener's due deliveries every `POLL_MS` (and at once after a report,
 * so a busy listener is not paced by the poll), signs each as the dispatcher would at the moment it
 * is handed over, renews its listener every third of `LISTENER_LEASE_MS`, and says it is alive every
 * `KEEP_ALIVE_MS` (proxies close quiet connections). When another stream with the same key takes
 * over, the older one is told (`replaced`) and ends; a revoked or expired key's stream gets
 * nothing more and ends at its next renewal; when the CLI goes, its listener gets no new deliveries. A stream never holds more than `LISTENER_IN_FLIGHT` deliveries unreported.
 */

/** How often an idle stream looks for deliveries. */
export const POLL_MS = 1000;
const KEEP_ALIVE_MS = 15_000;
const RENEW_MS = LISTENER_LEASE_MS / 3;

/** What a stream says of one delivery: what the CLI posts to its local URL, and what it reports back with. */
const deliveryEvent = (delivery: ListenerDelivery, signatureHeader: string) => ({
  delivery_id: delivery.id,
  lease_token: delivery.leaseToken,
  attempt: delivery.attempt,
  type: delivery.type,
  message_id: delivery.envelopeId,
  headers: signedHeaders(delivery, Math.floor(Date.now() / 1000), signatureHeader),
  body: delivery.body,
});

/** One server-sent event: its name and one line of JSON. */
const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

interface Stream {
  /** Looks for deliveries now (after a report: a place came free). */
  readonly poll: () => void;
  /** Ends the stream, saying `replaced` first when another stream took over. */
  readonly end: (replaced: boolean) => void;
}

export class ListenerStreams {
  /** Open streams by their API key's id (a key has one listener): at most one per key in this process. */
  private readonly open = new Map<number, Stream>();
  /** Set by `endAll`: the process is stopping, and opens no new stream (a CLI reconnects elsewhere). */
  stopping = false;

  private readonly logger: Logger;
  private readonly signatureHeader: string;
  private readonly run: <A, E>(program: Effect.Effect<A, E, RequestStorage>) => Promise<A>;

  constructor(logger: Logger, signatureHeader: string, run: <A, E>(program: Effect.Effect<A, E, RequestStorage>) => Promise<A>) {
    this.logger = logger;
    this.signatureHeader = signatureHeader;
    this.run = run;
  }

  /** Streams `listener`'s deliveries on `ctx`'s response until the CLI goes, another stream takes over, or the process stops. */
  serve(ctx: Context, actor: ApiKeyActor, listener: OpenedListener, request: ListenRequest): void {
    // Another stream of this key here is replaced at once (one elsewhere learns it at its next renewal).
    this.open.get(actor.scope.apiKeyId)?.end(true);
    const socket = ctx.req.socket;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    const body = new PassThrough();
    ctx.status = 200;
    ctx.set({ "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-store", "x-accel-buffering": "no" });
    ctx.body = body;
    body.write(event("ready", {
      listener_id: listener.id, secret: listener.secret, forward_to: request.forwardTo, events: request.eventTypes, took_over: listener.tookOver,
    }));

    let ended = false;
    let polling = false;
    let failing = false;
    let pollAgain = false;
    const poll = async () => {
      if (ended) return;
      if (polling) return void (pollAgain = true);
      polling = true;
      try {
        const deliveries = await this.run(LocalForwarding.claim(actor, listener));
        failing = false;
        for (const delivery of deliveries) if (!ended) body.write(event("delivery", deliveryEvent(delivery, this.signatureHeader)));
      } catch (error) {
        // Said once per run of failures (an outage would otherwise log every second per stream).
        if (!failing) this.logger.warn({ err: error, listener: listener.id }, "listener poll failed; retrying every second");
        failing = true;
      } finally {
        polling = false;
      }
      if (pollAgain) {
        pollAgain = false;
        void poll();
      }
    };
    const renew = async () => {
      try {
        const renewal = await this.run(LocalForwarding.renew(actor, listener));
        // A revoked or expired key's stream just ends: the CLI's reconnection is refused with the usual 401.
        if (renewal !== "renewed") stream.end(renewal === "replaced");
      } catch (error) {
        this.logger.warn({ err: error, listener: listener.id }, "listener renewal failed");
      }
    };
    const timers = [
      setInterval(() => void poll(), POLL_MS),
      setInterval(() => void renew(), RENEW_MS),
      setInterval(() => body.write(": keep-alive\n\n"), KEEP_ALIVE_MS),
    ];
    const stream: Stream = {
      poll: () => void poll(),
      end: (replaced) => {
        if (ended) return;
        ended = true;
        for (const timer of timers) clearInterval(timer);
        if (this.open.get(actor.scope.apiKeyId) === stream) this.open.delete(actor.scope.apiKeyId);
        if (replaced) body.write(event("replaced", { error: LISTENER_REPLACED }));
        body.end();
        // Its listener stops getting deliveries; a replaced one's `close` matches nothing (another stream holds it).
        this.run(LocalForwarding.close(actor, listener)).catch((error: unknown) =>
          this.logger.warn({ err: error, listener: listener.id }, "listener close failed"));
      },
    };
    this.open.set(actor.scope.apiKeyId, stream);
    ctx.res.once("close", () => stream.end(false));
    void poll();
  }

  /** A report came in for a delivery of `actor`'s listener: its stream (if here) looks for more at once. */
  reported(actor: ApiKeyActor): void {
    this.open.get(actor.scope.apiKeyId)?.poll();
  }

  /** Ends every stream (the process is stopping); each CLI reconnects to another instance. */
  endAll(): void {
    this.stopping = true;
    for (const stream of [...this.open.values()]) stream.end(false);
  }
}
