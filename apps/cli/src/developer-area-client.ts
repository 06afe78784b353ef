import { ConfigError, type Environment, readMatching, readOrigin } from "@platter/ops";
import { Result, Schema } from "effect";
import { type EventSourceMessage, EventSourceParserStream } from "eventsource-parser/stream";
import { Agent, fetch, type Response } from "undici";
import { API_KEY_TEXT, DEFAULT_DEVELOPER_AREA_ORIGIN, loadKeyCommandConfig } from "./config.ts";
import { CommandFailed, UsageError } from "./failures.ts";

/**
 * The Developer area's CLI routes (`/cli/…`) as the commands that work with an integrator's API key
 * call them: `platter listen`'s stream of deliveries and its reports of the local answers,
 * `platter trigger` with a key, and `platter messages tail`'s pages of the message feed. Every request carries the key as `Authorization: Bearer …`; nothing
 * here touches the database. The area's refusals come back as JSON `{"error": "<sentence>"}`.
 */

/** Names the CLI to the Developer area and to the local URL it forwards to. */
export const CLI_USER_AGENT = "platter-cli (platter listen)";

/** How a key command reaches the Developer area: its origin and the key. */
export interface DeveloperAreaConnection {
  readonly origin: string;
  readonly apiKey: string;
}

/** `--api-key` and `--developer-area-url` as citty hands them over. */
export interface ConnectionFlags {
  readonly "api-key"?: string | undefined;
  readonly "developer-area-url"?: string | undefined;
}

/** A flag's value read with an ops reader under the flag's name: a bad one is a usage error naming the flag. */
const readFlag = <T>(name: string, value: string, read: (env: Environment, name: string) => T): T => {
  try {
    return read({ [name]: value }, name);
  } catch (error) {
    throw error instanceof ConfigError ? new UsageError(error.message) : error;
  }
};

/**
 * The key and the origin a key command uses: the flags, else `PLATTER_API_KEY` and
 * `PLATTER_DEVELOPER_AREA_URL` (the origin defaults to `npm start`'s `http://localhost:3001`).
 * No key at all is a usage error saying how to give one; `keyNeeded` says what kind it must be.
 */
export const connectionOf = (flags: ConnectionFlags, keyNeeded: string, env: Environment = process.env): DeveloperAreaConnection => {
  const config = loadKeyCommandConfig(env);
  const flagKey = flags["api-key"];
  const apiKey = flagKey === undefined ? config.apiKey : readFlag("--api-key", flagKey, (e, n) => readMatching(e, n, "", API_KEY_TEXT, "an API key such as platter_test_rw_… (no spaces)"));
  if (apiKey === undefined || apiKey === "") throw new UsageError(`an API key is required: pass --api-key or set PLATTER_API_KEY (${keyNeeded})`);
  const flagUrl = flags["developer-area-url"];
  const origin = flagUrl === undefined ? config.developerAreaOrigin : readFlag("--developer-area-url", flagUrl, (e, n) => readOrigin(e, n, DEFAULT_DEVELOPER_AREA_ORIGIN));
  return { origin, apiKey };
};

/** The Developer area refused a request (a 4xx other than 400, which is a `UsageError`, or a 503 without Retry-After: `DeveloperAreaMisconfigured`): its sentence, exit 1. */
export class DeveloperAreaRefused extends CommandFailed {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/**
 * The Developer area answered 503 with its sentence and no Retry-After: the catalogue's refusal of something its
 * operator left off or set wrong (`SecretKeyUnavailable`: a key missing from SECRET_ENCRYPTION_KEYS; `MailNotConfigured`:
 * no SMTP_URL). Waiting changes nothing, so no command retries it: the sentence, said to be the area's settings, exit 1.
 */
export class DeveloperAreaMisconfigured extends DeveloperAreaRefused {
  constructor(origin: string, sentence: string) {
    super(503, `${sentence} (HTTP 503 from the Developer area at ${origin}, without Retry-After: its operator's settings, so trying again would not help until they change)`);
  }
}

/** The Developer area could not be reached or answered 5xx (it is down, or its database is): worth trying again. */
export class DeveloperAreaUnavailable extends CommandFailed {
  /** What went wrong, short: `ECONNREFUSED`, `503: The service is temporarily unavailable; retry shortly`. */
  readonly reason: string;
  constructor(origin: string, reason: string) {
    super(`cannot reach the Developer area at ${origin} (${reason})`);
    this.reason = reason;
  }
}

/** A network failure's short name: undici hides the system's code (`ECONNREFUSED`) in `cause`. */
export const describeNetworkError = (error: unknown): string => {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.cause?.code ?? e.code;
  const message = e.cause?.message ?? e.message ?? String(error);
  if (code !== undefined && code !== "") return message.includes(code) ? message : `${code}: ${message}`;
  return message;
};

/** What `platter listen` asks for: the local URL and the event types (empty: every type). */
export interface ListenQuery {
  readonly forwardTo: string;
  readonly eventTypes: ReadonlyArray<string>;
}

/** The stream's first event: the listener and the secret its deliveries are signed with. */
export const ReadyEvent = Schema.Struct({
  listener_id: Schema.Int,
  secret: Schema.String,
  forward_to: Schema.String,
  events: Schema.Array(Schema.String),
  /** Another `platter listen` with the key was connected: it has been told to stop. */
  took_over: Schema.optionalKey(Schema.Boolean),
});
export type ReadyEvent = typeof ReadyEvent.Type;

/** One delivery handed over: what to POST (exact headers and body) and what to report back with. */
export const DeliveryEvent = Schema.Struct({
  delivery_id: Schema.Int,
  lease_token: Schema.String,
  attempt: Schema.Int,
  type: Schema.String,
  message_id: Schema.String,
  headers: Schema.Record(Schema.String, Schema.String),
  body: Schema.String,
});
export type DeliveryEvent = typeof DeliveryEvent.Type;

/** The stream's last event when another `platter listen` with the same key took over. */
export const ReplacedEvent = Schema.Struct({ error: Schema.String });

/** An event's JSON `data` read with `schema`, or `undefined` when it is not that shape. */
export const eventData = <A>(schema: Schema.Codec<A, unknown>, message: EventSourceMessage): A | undefined => {
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch {
    return undefined;
  }
  const decoded = Schema.decodeUnknownResult(schema)(json);
  return Result.isSuccess(decoded) ? decoded.success : undefined;
};

/** What the CLI reports of one forward (`POST /cli/listen/attempts`). */
export interface AttemptReport {
  readonly delivery_id: number;
  readonly lease_token: string;
  readonly status_code: number | null;
  readonly duration_ms: number;
  readonly error: string | null;
  readonly response_body: string | null;
}

/** What a trigger made happen: `{"type": "invoice.paid", "subject": "invoice 3"}`. */
export interface Triggered {
  readonly type: string;
  readonly subject: string;
}

/** What `platter messages tail` asks for: where to start and which event types (empty: every type). */
export interface MessagesQuery {
  readonly cursor?: string | undefined;
  readonly since?: string | undefined;
  readonly eventTypes: ReadonlyArray<string>;
}

/** One message of the feed: the envelope's exact bytes (`body`; null when the area could not read it) and the cursor after it. */
export const FeedMessage = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  created_at: Schema.String,
  body: Schema.NullOr(Schema.String),
  cursor: Schema.String,
});
export type FeedMessage = typeof FeedMessage.Type;

/** One page of the feed. */
export const FeedPage = Schema.Struct({ data: Schema.Array(FeedMessage), has_more: Schema.Boolean });
export type FeedPage = typeof FeedPage.Type;

/** `GET /cli/alerts`'s answer: the organization's alert e-mail addresses, as the Alerts page lists them. */
export const AlertAddresses = Schema.Struct({
  recipients: Schema.Array(Schema.Struct({
    id: Schema.Finite,
    email: Schema.String,
    confirmed_at: Schema.NullOr(Schema.String),
    confirmation_expires_at: Schema.NullOr(Schema.String),
    link_expired: Schema.Boolean,
    created_at: Schema.String,
  })),
});
export type AlertAddresses = typeof AlertAddresses.Type;

/** `POST /cli/alerts`'s answer: the address added, and whether the relay took its confirmation mail. */
export interface AddedAlertAddress {
  readonly id: number;
  readonly email: string;
  readonly confirmation_mailed: boolean;
}

/** `POST /cli/alerts/:id/remove`'s answer. */
export interface RemovedAlertAddress {
  readonly id: number;
  readonly email: string;
  readonly removed: true;
}

/** How long the stream may stay silent: the area says it is alive every 15 s, so three missed beats mean the connection is gone. */
const STREAM_SILENCE_MS = 45_000;
/** How long a short call (a report, a trigger) or a stream's answer head may take. */
const CALL_TIMEOUT_MS = 15_000;
/** Most text one stream event may hold before the stream is given up (a delivery's body is at most a few hundred kB). */
const EVENT_MAX_CHARACTERS = 16 * 1024 * 1024;

export class DeveloperAreaClient {
  readonly connection: DeveloperAreaConnection;
  /** Connections to the area: a quiet stream times out after `STREAM_SILENCE_MS`, which ends it as lost. */
  private readonly agent = new Agent({ connect: { timeout: CALL_TIMEOUT_MS }, headersTimeout: CALL_TIMEOUT_MS, bodyTimeout: STREAM_SILENCE_MS });

  constructor(connection: DeveloperAreaConnection) {
    this.connection = connection;
  }

  /** `POST /cli/trigger`: makes one event of `type` happen in the key's sandbox. */
  async trigger(type: string): Promise<Triggered> {
    const response = await this.send("POST", "/cli/trigger", { type }, 201);
    return (await response.json()) as Triggered;
  }

  /** `POST /cli/listen/attempts`: reports what the local URL answered; resolves once it is recorded. */
  async reportAttempt(report: AttemptReport): Promise<void> {
    const response = await this.send("POST", "/cli/listen/attempts", report, 200);
    await response.body?.cancel();
  }

  /**
   * `GET /cli/listen`: opens the listener's stream and returns its events as the parser reads them
   * (comments, the keep-alives, are left out). A refusal (4xx) throws `DeveloperAreaRefused` or a
   * `UsageError` (400); an unreachable area or a 5xx throws `DeveloperAreaUnavailable`.
   */
  async listen(query: ListenQuery, signal: AbortSignal): Promise<ReadableStream<EventSourceMessage>> {
    const search = new URLSearchParams({ forward_to: query.forwardTo });
    if (query.eventTypes.length > 0) search.set("events", query.eventTypes.join(","));
    const path = `/cli/listen?${search.toString()}`;
    let response: Response;
    try {
      response = await fetch(this.connection.origin + path, {
        headers: { ...this.headers(), accept: "text/event-stream", "cache-control": "no-store" },
        signal,
        dispatcher: this.agent,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new DeveloperAreaUnavailable(this.connection.origin, describeNetworkError(error));
    }
    if (response.status !== 200) throw await this.failureOf(response, "/cli/listen");
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream") || response.body === null) {
      await response.body?.cancel();
      throw new DeveloperAreaRefused(200, `${this.connection.origin}/cli/listen did not answer with an event stream: is ${this.connection.origin} the Developer area's address (PLATTER_DEVELOPER_AREA_URL or --developer-area-url)?`);
    }
    return response.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream({ onError: "terminate", maxBufferSize: EVENT_MAX_CHARACTERS }));
  }

  /** `GET /cli/messages`: one page of the message feed from `query` (a cursor, else a time, else the oldest message kept). */
  async messages(query: MessagesQuery, signal: AbortSignal): Promise<FeedPage> {
    const search = new URLSearchParams({ limit: "100" });
    if (query.cursor !== undefined) search.set("cursor", query.cursor);
    else if (query.since !== undefined) search.set("since", query.since);
    if (query.eventTypes.length > 0) search.set("type", query.eventTypes.join(","));
    const path = `/cli/messages?${search.toString()}`;
    let response: Response;
    try {
      response = await fetch(this.connection.origin + path, {
        headers: { ...this.headers(), accept: "application/json" },
        signal: AbortSignal.any([signal, AbortSignal.timeout(CALL_TIMEOUT_MS)]),
        dispatcher: this.agent,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new DeveloperAreaUnavailable(this.connection.origin, describeNetworkError(error));
    }
    if (response.status !== 200) throw await this.failureOf(response, path);
    let answer: unknown;
    try {
      answer = await response.json();
    } catch (error) {
      if (signal.aborted) throw error;
      answer = undefined;
    }
    const page = Schema.decodeUnknownResult(FeedPage)(answer);
    if (Result.isFailure(page)) {
      throw new DeveloperAreaRefused(200, `${this.connection.origin}/cli/messages did not answer with a page of messages: is ${this.connection.origin} the Developer area's address (PLATTER_DEVELOPER_AREA_URL or --developer-area-url)?`);
    }
    return page.success;
  }

  /** `GET /cli/alerts`: the organization's alert e-mail addresses, oldest first. */
  async alertAddresses(): Promise<AlertAddresses> {
    let response: Response;
    try {
      response = await fetch(`${this.connection.origin}/cli/alerts`, {
        headers: { ...this.headers(), accept: "application/json" },
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        dispatcher: this.agent,
      });
    } catch (error) {
      throw new DeveloperAreaUnavailable(this.connection.origin, describeNetworkError(error));
    }
    if (response.status !== 200) throw await this.failureOf(response, "/cli/alerts");
    const listed = Schema.decodeUnknownResult(AlertAddresses)(await response.json().catch(() => undefined));
    if (Result.isFailure(listed)) {
      throw new DeveloperAreaRefused(200, `${this.connection.origin}/cli/alerts did not answer with a list of addresses: is ${this.connection.origin} the Developer area's address (PLATTER_DEVELOPER_AREA_URL or --developer-area-url)?`);
    }
    return listed.success;
  }

  /** `POST /cli/alerts`: adds an address, which the area mails its confirmation link. */
  async addAlertAddress(email: string): Promise<AddedAlertAddress> {
    const response = await this.send("POST", "/cli/alerts", { email }, 201);
    return (await response.json()) as AddedAlertAddress;
  }

  /** `POST /cli/alerts/:id/remove`: removes one of the organization's addresses. */
  async removeAlertAddress(id: number): Promise<RemovedAlertAddress> {
    const response = await this.send("POST", `/cli/alerts/${id}/remove`, {}, 200);
    return (await response.json()) as RemovedAlertAddress;
  }

  /** Closes the connections to the area. */
  close(): Promise<void> {
    return this.agent.destroy();
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.connection.apiKey}`, "user-agent": CLI_USER_AGENT };
  }

  /** Sends one JSON request and returns the answer when its status is `expected`; throws the failure otherwise. */
  private async send(method: "POST", path: string, body: unknown, expected: number): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(this.connection.origin + path, {
        method,
        headers: { ...this.headers(), "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
        dispatcher: this.agent,
      });
    } catch (error) {
      throw new DeveloperAreaUnavailable(this.connection.origin, describeNetworkError(error));
    }
    if (response.status !== expected) throw await this.failureOf(response, path);
    return response;
  }

  /** The failure an unexpected answer stands for, with the area's sentence when it sent one. */
  private async failureOf(response: Response, path: string): Promise<Error> {
    let sentence: string | undefined;
    try {
      const answer = (await response.json()) as { error?: unknown };
      if (typeof answer.error === "string" && answer.error !== "") sentence = answer.error;
    } catch {
      sentence = undefined;
    }
    const status = response.status;
    // A 503 without Retry-After is the catalogue's refusal of something the operator left off (no SMTP_URL, a
    // missing secret key): waiting changes nothing, so it is said as the area's refusal, not as the area being down.
    if (status === 503 && sentence !== undefined && !response.headers.has("retry-after")) return new DeveloperAreaMisconfigured(this.connection.origin, sentence);
    if (status >= 500) return new DeveloperAreaUnavailable(this.connection.origin, sentence === undefined ? `HTTP ${status}` : `${status}: ${sentence}`);
    if (status === 400) return new UsageError(sentence ?? `the Developer area refused the request (HTTP 400)`);
    if (status === 404 || sentence === undefined) {
      return new DeveloperAreaRefused(status,
        `${this.connection.origin}${path.split("?")[0]} answered HTTP ${status}${sentence === undefined ? "" : ` (${sentence})`}: is ${this.connection.origin} the Developer area's address (PLATTER_DEVELOPER_AREA_URL or --developer-area-url)?`);
    }
    return new DeveloperAreaRefused(status, sentence);
  }
}
