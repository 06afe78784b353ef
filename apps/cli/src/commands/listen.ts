import { parseEndpointUrl, parseEventTypes } from "@platter/domain";
import { defineCommand } from "citty";
import { Result } from "effect";
import type { EventSourceMessage } from "eventsource-parser";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent, request } from "undici";
import { jsonFlag } from "../arguments.ts";
import {
  type AttemptReport, CLI_USER_AGENT, connectionOf, DeliveryEvent, DeveloperAreaClient, DeveloperAreaRefused, DeveloperAreaUnavailable, describeNetworkError,
  eventData, type ListenQuery, ReadyEvent, ReplacedEvent,
} from "../developer-area-client.ts";
import { CommandFailed, UsageError } from "../failures.ts";
import { note } from "../output.ts";

/**
 * `platter listen --forward-to http://localhost:4000/hook`: an integrator's organization's webhook
 * deliveries on their own machine, with no public tunnel. With an API key (never the operator's
 * database) it holds a server-sent-events stream open to the Developer area, POSTs each delivery it
 * is handed to the local URL byte for byte with its real signature headers, prints one line per
 * delivery, and reports the local answer, which the area records as the delivery's attempt. A lost
 * connection is retried with backoff; a refusal (bad key, too many listeners, taken over, or the area's
 * own settings: a 503 without Retry-After, `DeveloperAreaMisconfigured`) ends it with exit 1; Ctrl+C
 * ends it with exit 0 once the forwards in flight are reported.
 */

/** How long one forward to the local URL may take. */
export const FORWARD_TIMEOUT_MS = 10_000;
/** Forwards in flight at once (the area hands out at most as many unreported). */
export const FORWARDS_AT_ONCE = 10;
/** How long a stop waits for forwards in flight to be reported. */
const STOP_GRACE_MS = 5_000;
/** Reconnection backoff: from the first to the longest wait, doubling; back to the first after a `ready`. */
const FIRST_RECONNECT_MS = 1_000;
const LONGEST_RECONNECT_MS = 30_000;
/** Tries of one report when the area is unreachable, 5xx or rate-limited, and the wait before the first retry (doubling). */
const REPORT_TRIES = 4;
const REPORT_RETRY_MS = 250;
/** How much of the local answer's body is reported (characters): what the Developer area keeps, as a dispatcher keeps 1 KiB. */
const RESPONSE_BODY_CHARACTERS = 1_024;
/** Bytes read of the local answer's body: enough for that many characters of UTF-8; the rest is not read. */
const RESPONSE_BODY_BYTES = RESPONSE_BODY_CHARACTERS * 4;
/** Headers the CLI's own HTTP client writes (framing, connection); never copied from what the area hands over. */
const CLIENT_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "expect", "te", "trailer", "user-agent"]);

/** What came of one forward. */
interface Forwarded {
  readonly status: number | null;
  readonly error: string | null;
  readonly responseBody: string | null;
  readonly durationMs: number;
}

/** The first `RESPONSE_BODY_CHARACTERS` of an answer's body; the rest is not read. `null` when it could not be read. */
const readPrefix = async (body: AsyncIterable<Buffer> & { destroy: () => void }): Promise<string | null> => {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_BYTES) break;
    }
  } catch {
    return null;
  } finally {
    body.destroy();
  }
  return [...Buffer.concat(chunks).toString("utf8")].slice(0, RESPONSE_BODY_CHARACTERS).join("");
};

/** What went wrong with a forward, short: `ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:4000`, `timeout after 10 s`. */
const forwardError = (error: unknown): string => {
  const name = (error as { name?: string }).name;
  if (name === "TimeoutError" || name === "HeadersTimeoutError" || name === "BodyTimeoutError") return `timeout after ${FORWARD_TIMEOUT_MS / 1000} s`;
  return describeNetworkError(error);
};

/** POSTs one delivery's exact body with its headers to `url`: never throws, follows no redirect, gives up after `FORWARD_TIMEOUT_MS`. */
const forward = async (agent: Agent, url: string, delivery: DeliveryEvent): Promise<Forwarded> => {
  const began = performance.now();
  const took = () => Math.round(performance.now() - began);
  const headers: Record<string, string> = { "user-agent": CLI_USER_AGENT };
  for (const [name, value] of Object.entries(delivery.headers)) if (!CLIENT_HEADERS.has(name.toLowerCase())) headers[name] = value;
  try {
    // undici's request follows no redirect: a 3xx is the local answer, reported as such.
    const response = await request(url, {
      method: "POST",
      dispatcher: agent,
      headers,
      body: delivery.body,
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const responseBody = await readPrefix(response.body);
    return { status: response.statusCode, error: null, responseBody, durationMs: took() };
  } catch (error) {
    return { status: null, error: forwardError(error), responseBody: null, durationMs: took() };
  }
};

/** `HH:MM:SS` of the local clock. */
const localTime = (at: Date): string => [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");

/** Prints on stdout: one JSON object per line with `--json`, else the human line. */
const printer = (json: boolean) => (object: object, human: string): void => {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${human}\n`);
};

/** Reports one forward, retrying while the area is unreachable, 5xx or rate-limited; a refusal (a lost lease) becomes a warning. */
const report = async (client: DeveloperAreaClient, delivery: DeliveryEvent, forwarded: Forwarded): Promise<void> => {
  const body: AttemptReport = {
    delivery_id: delivery.delivery_id,
    lease_token: delivery.lease_token,
    status_code: forwarded.status,
    duration_ms: forwarded.durationMs,
    error: forwarded.error,
    response_body: forwarded.responseBody,
  };
  for (let tried = 1; ; tried++) {
    try {
      return await client.reportAttempt(body);
    } catch (error) {
      const retryable = error instanceof DeveloperAreaUnavailable || (error instanceof DeveloperAreaRefused && error.status === 429);
      if (retryable && tried < REPORT_TRIES) {
        await sleep(REPORT_RETRY_MS * 2 ** (tried - 1));
        continue;
      }
      note(`warning: the answer to delivery ${delivery.delivery_id} (${delivery.type} ${delivery.message_id}) was not recorded: ${(error as Error).message}`);
      return;
    }
  }
};

/**
 * The forwards in flight: at most `FORWARDS_AT_ONCE` at a time (later deliveries wait their turn,
 * in order), each printed when its own answer arrives and then reported.
 */
class Forwards {
  private running = 0;
  private readonly queued: Array<() => void> = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly agent = new Agent({ connect: { timeout: FORWARD_TIMEOUT_MS }, keepAliveTimeout: 4_000 });
  private readonly client: DeveloperAreaClient;
  private readonly forwardTo: string;
  private readonly print: ReturnType<typeof printer>;

  constructor(client: DeveloperAreaClient, forwardTo: string, print: ReturnType<typeof printer>) {
    this.client = client;
    this.forwardTo = forwardTo;
    this.print = print;
  }

  /** Forwards `delivery` as soon as a place is free. */
  add(delivery: DeliveryEvent): void {
    const done = this.turn().then(() => this.handle(delivery)).finally(() => {
      this.inFlight.delete(done);
      this.running--;
      this.queued.shift()?.();
    });
    this.inFlight.add(done);
  }

  /** Waits for the forwards in flight to be reported, at most `ms` (or until `cut` aborts); resolves with how many were left. */
  async settle(ms: number, cut: AbortSignal): Promise<number> {
    const stop = AbortSignal.any([AbortSignal.timeout(ms), cut]);
    const stopped = new Promise<void>((resolve) => (stop.aborted ? resolve() : stop.addEventListener("abort", () => resolve(), { once: true })));
    await Promise.race([Promise.allSettled([...this.inFlight]), stopped]);
    return this.inFlight.size;
  }

  /** Closes the connections to the local URL. */
  close(): Promise<void> {
    return this.agent.destroy();
  }

  private turn(): Promise<void> {
    if (this.running < FORWARDS_AT_ONCE) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queued.push(() => (this.running++, resolve())));
  }

  private async handle(delivery: DeliveryEvent): Promise<void> {
    const forwarded = await forward(this.agent, this.forwardTo, delivery);
    const outcome = forwarded.status === null ? `error: ${forwarded.error}` : String(forwarded.status);
    this.print(
      { kind: "delivery", type: delivery.type, message_id: delivery.message_id, delivery_id: delivery.delivery_id, status: forwarded.status, error: forwarded.error, duration_ms: forwarded.durationMs },
      `${localTime(new Date())}  ${delivery.type}  ${delivery.message_id}  -> ${outcome}  (${forwarded.durationMs} ms)`,
    );
    await report(this.client, delivery, forwarded);
  }
}

/** The listener's `--forward-to` and `--events`, checked by the domain's rules before anything connects. */
export const listenQueryOf = (forwardTo: string, events: string | undefined): ListenQuery => {
  const url = parseEndpointUrl(forwardTo);
  if (Result.isFailure(url)) throw new UsageError(`--forward-to: ${url.failure.message}`);
  if (events !== undefined && events.split(",").every((name) => name.trim() === "")) {
    throw new UsageError("--events: name at least one event type, or leave --events out for every type");
  }
  const types = parseEventTypes(events ?? "");
  if (Result.isFailure(types)) throw new UsageError(`--events: ${types.failure.message}`);
  return { forwardTo: url.success, eventTypes: types.success };
};

/** How one stream ended: lost (reconnect), or the command is over (stopped by a signal, or replaced: a failure). */
type StreamEnd = { readonly kind: "lost"; readonly reason: string } | { readonly kind: "stopped" } | { readonly kind: "replaced"; readonly message: string };

/** Runs `platter listen` until a signal (resolves) or a final refusal (throws). */
const listen = async (client: DeveloperAreaClient, query: ListenQuery, json: boolean): Promise<void> => {
  const print = printer(json);
  const forwards = new Forwards(client, query.forwardTo, print);
  // The first signal stops the stream and waits for the forwards in flight; a second one stops waiting.
  const stopping = new AbortController();
  const hurry = new AbortController();
  const onSignal = () => (stopping.signal.aborted ? hurry.abort() : stopping.abort());
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let announced: ReadyEvent | undefined;
  let backoff = FIRST_RECONNECT_MS;

  /** Reads one stream to its end, forwarding each delivery. */
  const follow = async (events: ReadableStream<EventSourceMessage>): Promise<StreamEnd> => {
    try {
      for await (const message of events) {
        if (message.event === "ready") {
          const ready = eventData(ReadyEvent, message);
          if (ready === undefined) continue;
          backoff = FIRST_RECONNECT_MS;
          if (announced?.listener_id === ready.listener_id && announced.secret === ready.secret) {
            note(`Reconnected to ${client.connection.origin} (listener ${ready.listener_id})`);
          } else {
            const types = ready.events.length === 0 ? "every event type" : ready.events.join(", ");
            print({ kind: "ready", ...ready }, `Ready. Forwarding deliveries to ${ready.forward_to} (listener ${ready.listener_id}; ${types}). Signing secret: ${ready.secret}`);
            if (ready.took_over === true) note("Another platter listen with this key was connected: it has been stopped, and this one gets the deliveries now");
          }
          announced = ready;
        } else if (message.event === "delivery") {
          const delivery = eventData(DeliveryEvent, message);
          if (delivery === undefined) note(`warning: skipped a delivery event the CLI could not read: ${message.data.slice(0, 200)}`);
          else forwards.add(delivery);
        } else if (message.event === "replaced") {
          return { kind: "replaced", message: eventData(ReplacedEvent, message)?.error ?? "Another platter listen with this key took over" };
        }
      }
      return stopping.signal.aborted ? { kind: "stopped" } : { kind: "lost", reason: "the stream ended" };
    } catch (error) {
      return stopping.signal.aborted ? { kind: "stopped" } : { kind: "lost", reason: describeNetworkError(error) };
    }
  };

  /** Waits for the forwards in flight (bounded), says if some were left, and lets go of everything. */
  const finish = async () => {
    const left = await forwards.settle(STOP_GRACE_MS, hurry.signal);
    if (left > 0) note(`${left} forward${left === 1 ? "" : "s"} still in flight not reported: the Developer area hands them out again once their lease runs out`);
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await Promise.allSettled([forwards.close(), client.close()]);
  };

  try {
    while (!stopping.signal.aborted) {
      let end: StreamEnd;
      try {
        end = await follow(await client.listen(query, stopping.signal));
      } catch (error) {
        if (stopping.signal.aborted) break;
        if (!(error instanceof DeveloperAreaUnavailable)) throw error;
        // Never connected yet: a wrong address or a stopped area is said at once, not retried forever.
        if (announced === undefined) throw error;
        end = { kind: "lost", reason: error.reason };
      }
      if (end.kind === "stopped") break;
      if (end.kind === "replaced") throw new CommandFailed(end.message);
      const wait = backoff;
      backoff = Math.min(backoff * 2, LONGEST_RECONNECT_MS);
      note(`Connection to ${client.connection.origin} lost (${end.reason}); reconnecting in ${wait / 1000}s`);
      try {
        await sleep(wait, undefined, { signal: stopping.signal });
      } catch {
        break;
      }
    }
  } finally {
    await finish();
  }
};

export const listenCommand = defineCommand({
  meta: {
    name: "listen",
    description: "Forward your organization's webhook deliveries to a local URL, signed as sent, with an API key (Ctrl+C stops)",
  },
  args: {
    "forward-to": { type: "string", required: true, description: "Local URL each delivery is POSTed to, such as http://localhost:4000/hook" },
    events: { type: "string", description: "Only these event types, comma-separated (default: every type)" },
    "api-key": { type: "string", description: "The organization's API key (default: PLATTER_API_KEY)" },
    "developer-area-url": { type: "string", description: "The Developer area's origin (default: PLATTER_DEVELOPER_AREA_URL, else http://localhost:3001)" },
    json: { ...jsonFlag, description: "Print one JSON object per line (ready, then one per delivery); messages go to stderr" },
  },
  run: async ({ args }) => {
    const query = listenQueryOf(args["forward-to"], args.events);
    const client = new DeveloperAreaClient(connectionOf(args, "any key of the organization; a sandbox key for a sandbox"));
    await listen(client, query, args.json);
  },
});
