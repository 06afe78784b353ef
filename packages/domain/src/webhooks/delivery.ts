import { Result } from "effect";
import { InvalidInput } from "../errors.ts";
import { ECHOED_INPUT_MAX_CHARACTERS, storableText } from "../storable-text.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./message.ts";

/** Webhook delivery rules: subscriptions, retries, outcomes, and the shapes of a delivery and its attempts. */

/** Whether an endpoint subscribed to `types` (empty: every type) receives a message of `type`. */
export const subscribes = (types: ReadonlyArray<string>, type: string): boolean =>
  types.length === 0 || types.includes(type);

/** Parses `--events t1,t2`; every name must be a known event type. */
export const parseEventTypes = (text: string): Result.Result<WebhookEventType[], InvalidInput> => {
  const names = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const unknown = names.find((name) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(name));
  return unknown === undefined
    ? Result.succeed([...new Set(names)] as WebhookEventType[])
    : Result.fail(new InvalidInput({ message: `unknown event type "${storableText(unknown, ECHOED_INPUT_MAX_CHARACTERS)}"; known: ${WEBHOOK_EVENT_TYPES.join(", ")}` }));
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The industry-norm schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed. */
export const DEFAULT_RETRY_SCHEDULE_MS: ReadonlyArray<number> = [
  0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR,
];

/**
 * What an endpoint's answer means for the delivery; `unsendable` is a delivery whose stored
 * message no longer reads as its type (nothing was sent: it fails for good, and says nothing of
 * the endpoint's health).
 */
export type AttemptOutcome = "succeeded" | "failed" | "gone" | "unsendable";

/** The error recorded on a delivery whose stored message no longer reads as its type (`unsendable`: nothing was sent). */
export const UNREADABLE_MESSAGE = "ESCHEMA: the stored message does not match its type's schema; nothing was sent";

/** 2xx succeeds; 410 Gone also disables the endpoint; anything else (3xx too) is a failed try. */
export const outcomeOf = (status: number | undefined): AttemptOutcome => {
  if (status === undefined) return "failed";
  if (status >= 200 && status < 300) return "succeeded";
  return status === 410 ? "gone" : "failed";
};

/**
 * How deliveries are claimed and settled, the same for every dispatcher process of a database.
 * Each claim shares the free slots fairly: organizations take turns, and within one its endpoints
 * take turns, oldest delivery first (each endpoint within the dispatcher's `HeldSlots`).
 *
 * An endpoint's circuit opens after `circuitThreshold` failed attempts in a row: nothing is sent
 * to it for `circuitCooldownMs`, then it is half-open (one probe in flight at a time per
 * dispatcher) until an attempt succeeds and closes it, or fails and opens it again. Its deliveries
 * keep their places and their retry schedule meanwhile: an open circuit delays them without
 * spending their tries.
 */
export interface DeliveryPolicy {
  readonly circuitThreshold: number;
  readonly circuitCooldownMs: number;
  /** Delays per try: `[n]` before try n + 1, so the first is before the first try; exhausted, a delivery has failed. */
  readonly retryScheduleMs: ReadonlyArray<number>;
  /** An endpoint failing for this long is disabled. */
  readonly failureWindowMs: number;
  /** How long before the failure window ends the `disabling_soon` notice is written (`DEFAULT_DISABLE_NOTICE_MS` unless set). */
  readonly disableNoticeMs?: number | undefined;
  /**
   * Whether the notices written go to the operator's webhook (`OPERATOR_WEBHOOK_URL` is set): written
   * pending its delivery, otherwise as `unsent` (shown in the Developer area only).
   */
  readonly notifyOperator?: boolean | undefined;
}

/** Delay before a delivery's first try: the retry schedule's first entry. */
export const firstAttemptDelayMs = (policy: Pick<DeliveryPolicy, "retryScheduleMs">): number => policy.retryScheduleMs[0] ?? 0;

/**
 * What one dispatcher holds: its share of each endpoint's cap on attempts in flight (the cap
 * divided between the dispatchers live, rounded up, so together they stay within it) and its
 * attempts in flight per endpoint id. Claims skip an endpoint while this dispatcher is at its share.
 */
export interface HeldSlots {
  readonly share: number;
  readonly inFlight: ReadonlyMap<number, number>;
  /** This dispatcher's share of an organization's cap on attempts in flight (see `organizationShare`). */
  readonly organizationShare: number;
  /** Attempts in flight per organization id. Claims skip an organization at its share and serve those holding fewer first. */
  readonly inFlightByOrganization: ReadonlyMap<number, number>;
  /** Connections this dispatcher opens per origin: claims never take more of an origin's deliveries than it can send at once. */
  readonly originConnections: number;
  /** Attempts in flight per origin (`DueDelivery.origin`). */
  readonly inFlightByOrigin: ReadonlyMap<string, number>;
  /** How many of an origin's connections one organization may hold (see `originShare`). */
  readonly originShare: number;
}

/**
 * One dispatcher's share of an organization's attempts in flight. With a cap across all dispatchers
 * (`organizationConcurrency`), the cap divided between the dispatchers live, rounded up, as for an
 * endpoint's cap. Without one, each dispatcher lets a lone busy organization use all its slots but
 * a reserve (the endpoint cap, or a sixteenth of the slots if more; at most a quarter of them, so an
 * endpoint cap as large as the slots still leaves an organization most of them) kept for the others: an
 * organization whose attempts hold their slots for seconds can then never leave another
 * organization waiting for one.
 */
export const organizationShare = (settings: {
  readonly concurrency: number;
  readonly endpointConcurrency: number;
  readonly organizationConcurrency?: number | undefined;
}, dispatchers: number): number =>
  settings.organizationConcurrency === undefined
    ? Math.max(1, settings.concurrency - Math.min(
      Math.max(settings.endpointConcurrency, Math.ceil(settings.concurrency / 16)), Math.ceil(settings.concurrency / 4),
    ))
    : Math.max(1, Math.ceil(settings.organizationConcurrency / Math.max(1, dispatchers)));

/**
 * How many of a dispatcher's connections to one origin a single organization may hold: all but a
 * quarter (48 of 64), kept for the other organizations whose endpoints live there (an integration
 * platform's hooks host, say), so one whose endpoints there hold every request for seconds never
 * leaves them waiting for a connection.
 */
export const originShare = (originConnections: number): number => Math.max(1, originConnections - Math.ceil(originConnections / 4));

/** The state of an endpoint's circuit at `nowMs`, from when it is open until (undefined: closed). */
export type CircuitState = "closed" | "open" | "half_open";

export const circuitState = (openUntilMs: number | undefined, nowMs: number): CircuitState =>
  openUntilMs === undefined ? "closed" : openUntilMs > nowMs ? "open" : "half_open";

/** A delivery the dispatcher holds the lease of and should attempt now. */
export interface DueDelivery {
  readonly id: number;
  readonly organizationId: number;
  readonly endpointId: number;
  readonly url: string;
  /** The endpoint's origin (`endpointOrigin`): the HTTP client's connections are pooled, and attempts counted, per origin. */
  readonly origin: string;
  readonly secret: string;
  /** The secret before a rotation, while its overlap lasts: it signs beside `secret` in `webhook-signature`. */
  readonly previousSecret?: string | undefined;
  readonly envelopeId: string;
  /** The exact bytes to send, the same on every try. */
  readonly body: string;
  /** 1 for the first try. */
  readonly attempt: number;
  /** Proves the lease is still ours when the result is written. */
  readonly leaseToken: string;
  /**
   * Claimed while its endpoint's circuit is half-open: the one probe. Its slot stays held until its
   * result is written, so no second probe goes out before the first one's result closes or reopens the circuit.
   */
  readonly probe: boolean;
  /** The creating request's W3C `traceparent` (null when nothing traced it): the attempt's span is its child. */
  readonly traceparent?: string | null | undefined;
  /** When its message was made (ISO, to the millisecond): its history's partition key, so its result is written to one partition. */
  readonly createdAt: string;
}

/** What one try did. */
export interface AttemptResult {
  readonly startedAt: Date;
  readonly durationMs: number;
  readonly statusCode: number | undefined;
  readonly error: string | undefined;
  /** The first KiB of the response body. */
  readonly responseBody: string | undefined;
  readonly outcome: AttemptOutcome;
}

/** One try of a delivery and its result: what happens next is `deliveryAfterAttempt`'s to decide. */
export interface AttemptRecord extends AttemptResult {
  readonly delivery: DueDelivery;
}
