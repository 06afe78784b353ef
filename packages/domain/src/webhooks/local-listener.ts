import { Result, Schema } from "effect";
import { InvalidInput, InvalidTransition } from "../errors.ts";
import { decodeInput } from "../input.ts";
import { ATTEMPT_TEXT_MAX_CHARACTERS, storableText } from "../storable-text.ts";
import { type AttemptOutcome, outcomeOf, parseEventTypes } from "./delivery.ts";
import { parseEndpointUrl } from "./endpoint-input.ts";
import type { WebhookEventType } from "./message.ts";

/**
 * Local forwarding (`platter listen --forward-to http://localhost:4000/hook`): an API key's one
 * listener, an endpoint of its organization whose deliveries no dispatcher sends. The CLI holds a
 * stream open to the Developer area, which hands it the listener's deliveries signed as the
 * dispatcher signs them; the CLI POSTs each to its local URL and reports the answer, which is
 * recorded as the attempt. The rules of that exchange live here.
 */

/** How long a listener keeps getting new deliveries after its stream last renewed it; a stream renews it every third of this. */
export const LISTENER_LEASE_MS = 30_000;
/** How long a forwarded delivery is the stream's: unreported by then, it is handed out again (as a new attempt). */
export const LISTENER_DELIVERY_LEASE_MS = 30_000;
/** Deliveries one listener has out at once (handed to the CLI and not yet reported). */
export const LISTENER_IN_FLIGHT = 10;
/** Listeners connected at once per organization unless `LISTENERS_PER_ORGANIZATION` says otherwise. */
export const DEFAULT_LISTENERS_PER_ORGANIZATION = 5;
/**
 * A listener's deliveries still waiting this long after their message (the CLI was away) are given
 * up as failed when it connects again: a laptop back from a weekend gets what happens from now on,
 * not a flood of stale messages. Replay them from the Developer area to send them again.
 */
export const LISTENER_BACKLOG_MS = 60 * 60 * 1000;
/** The error recorded on a delivery given up that way. */
export const LISTENER_BACKLOG_EXPIRED = "not forwarded: no platter listen was connected within an hour of the message";

/** What `platter listen` asks for: where it forwards (any http(s) URL: the CLI posts there, never Platter) and which types. */
export interface ListenRequest {
  readonly forwardTo: string;
  /** Empty: every type. */
  readonly eventTypes: ReadonlyArray<WebhookEventType>;
}

/** The stream's query (`forward_to`, `events`), as the CLI sends it. */
export const parseListenRequest = (query: Readonly<Record<string, unknown>>): Result.Result<ListenRequest, InvalidInput> => {
  const one = (name: string): string | undefined => {
    const value = query[name];
    return typeof value === "string" ? value : undefined;
  };
  const forwardTo = one("forward_to");
  if (forwardTo === undefined) return Result.fail(new InvalidInput({ message: "forward_to is required: the local URL to forward deliveries to" }));
  const url = parseEndpointUrl(forwardTo);
  if (Result.isFailure(url)) return Result.fail(new InvalidInput({ message: `forward_to: ${url.failure.message}` }));
  const events = query["events"];
  if (events !== undefined && typeof events !== "string") return Result.fail(new InvalidInput({ message: "events must be given once" }));
  const eventTypes = parseEventTypes(events ?? "");
  if (Result.isFailure(eventTypes)) return Result.fail(new InvalidInput({ message: `events: ${eventTypes.failure.message}` }));
  return Result.succeed({ forwardTo: url.success, eventTypes: eventTypes.success });
};

/**
 * A reported text (the local answer, or what went wrong): any string, made storable when read (a
 * local app may answer with NUL bytes, as any receiver may; a dispatcher keeps such an answer too).
 */
const reportedText = (field: string) =>
  Schema.optionalKey(Schema.NullOr(Schema.String).annotate({ message: `${field} must be a string or null` }));

/** What the CLI reports of one forward: the local answer's status (null: none came), its duration, and what went wrong. */
const ListenerReportBody = Schema.Struct({
  delivery_id: Schema.Int.annotate({ message: "delivery_id must be a positive integer" })
    .check(Schema.isGreaterThan(0, { message: "delivery_id must be a positive integer" }))
    .annotateKey({ messageMissingKey: "delivery_id is required" }),
  lease_token: Schema.String.annotate({ message: "lease_token must be the delivery's lease token" })
    .check(Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, { message: "lease_token must be the delivery's lease token" }))
    .annotateKey({ messageMissingKey: "lease_token is required" }),
  status_code: Schema.NullOr(
    Schema.Int.annotate({ message: "status_code must be an HTTP status (100 to 599) or null" })
      .check(Schema.isBetween({ minimum: 100, maximum: 599 }, { message: "status_code must be an HTTP status (100 to 599) or null" })),
  ).annotate({ message: "status_code must be an HTTP status (100 to 599) or null" })
    .annotateKey({ messageMissingKey: "status_code is required (null when the local URL gave no answer)" }),
  duration_ms: Schema.Finite.annotate({ message: "duration_ms must be a number of milliseconds" })
    .check(Schema.isBetween({ minimum: 0, maximum: 3_600_000 }, { message: "duration_ms must be between 0 and 3600000" }))
    .annotateKey({ messageMissingKey: "duration_ms is required" }),
  error: reportedText("error"),
  response_body: reportedText("response_body"),
});

/** One forward as the CLI reported it, read. */
export interface ListenerReport {
  readonly deliveryId: number;
  readonly leaseToken: string;
  readonly statusCode: number | undefined;
  readonly durationMs: number;
  readonly error: string | undefined;
  readonly responseBody: string | undefined;
  readonly outcome: AttemptOutcome;
}

/** Reads a report's JSON body; an answer with no status and no error says "no answer". */
export const parseListenerReport = (body: unknown): Result.Result<ListenerReport, InvalidInput> =>
  Result.map(decodeInput(ListenerReportBody, body), (report) => {
    const statusCode = report.status_code ?? undefined;
    const cut = (text: string | null | undefined) =>
      text === null || text === undefined ? undefined : storableText(text, ATTEMPT_TEXT_MAX_CHARACTERS);
    return {
      deliveryId: report.delivery_id,
      leaseToken: report.lease_token,
      statusCode,
      durationMs: Math.round(report.duration_ms),
      error: cut(report.error) ?? (statusCode === undefined ? "no answer from the local URL" : undefined),
      responseBody: cut(report.response_body),
      outcome: listenerOutcome(statusCode),
    };
  });

/**
 * A forward's outcome: 2xx succeeded; anything else failed, and for good (a listener is someone at
 * their desk: nothing is retried behind their back; they replay a delivery to send it again). A 410
 * says nothing more for a listener than any other failure: it is never disabled by its answers.
 */
export const listenerOutcome = (status: number | undefined): AttemptOutcome => (outcomeOf(status) === "succeeded" ? "succeeded" : "failed");

/** A report for a delivery the stream no longer holds (its lease ran out and it went out again, or it was already reported). */
export const leaseLost = (): InvalidTransition =>
  new InvalidTransition({ message: "This delivery is no longer held by this listener (its lease ran out, or it was already reported)" });

/** Another `platter listen` with the same key took over the listener. */
export const LISTENER_REPLACED = "Another platter listen with this key took over";

/** A new listener refused: the organization already has `limit` connected. */
export const tooManyListeners = (limit: number): InvalidTransition =>
  new InvalidTransition({ message: `This organization already has ${limit} platter listen sessions connected; stop one first` });
