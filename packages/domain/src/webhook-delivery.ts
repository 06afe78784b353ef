import { Result, Schema } from "effect";
import { InvalidInput } from "./errors.ts";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./webhook-event.ts";

/** Webhook delivery rules: the outbox payload versions, envelopes, subscriptions, retries and outcomes. */

/**
 * Outbox payloads are a tagged, versioned union: a new shape is added beside the old one, never
 * edited in place, so rows written by an older API are still delivered after a deploy.
 */
export const OutboxPayloadV1 = Schema.Struct({
  version: Schema.Literal(1),
  data: Schema.Record(Schema.String, Schema.Unknown),
});
export const OutboxPayload = Schema.Union([OutboxPayloadV1]);
export type OutboxPayload = typeof OutboxPayload.Type;

/** An outbox row as the fan-out reads it. */
export interface OutboxRecord {
  readonly envelopeId: string;
  readonly type: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly createdAt: string;
  readonly payload: unknown;
}

/**
 * The exact bytes a delivery sends, fixed once at fan-out: every retry resends them unchanged,
 * so the envelope id and the signature stay the same and receivers can deduplicate.
 */
export const envelopeBody = (record: OutboxRecord): string | undefined => {
  const payload = Schema.decodeUnknownResult(OutboxPayload)(record.payload);
  if (Result.isFailure(payload)) return undefined;
  return JSON.stringify({ id: record.envelopeId, type: record.type, created_at: record.createdAt, data: payload.success.data });
};

/** Whether an endpoint subscribed to `types` (empty: every type) receives an event of `type`. */
export const subscribes = (types: ReadonlyArray<string>, type: string): boolean =>
  types.length === 0 || types.includes(type);

/** Parses `--events t1,t2`; every name must be a known event type. */
export const parseEventTypes = (text: string): Result.Result<WebhookEventType[], InvalidInput> => {
  const names = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const unknown = names.find((name) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(name));
  return unknown === undefined
    ? Result.succeed([...new Set(names)] as WebhookEventType[])
    : Result.fail(new InvalidInput({ message: `unknown event type "${unknown}"; known: ${WEBHOOK_EVENT_TYPES.join(", ")}` }));
};

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The industry-norm schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; then failed. */
export const DEFAULT_RETRY_SCHEDULE_MS: ReadonlyArray<number> = [
  0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR,
];

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: MINUTE, h: HOUR, d: 24 * HOUR };

/** Parses a duration such as `15s`, `500ms`, `5d`. */
export const parseDuration = (text: string): number | undefined => {
  const match = DURATION.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]!]!;
};

/** Parses `WEBHOOK_RETRY_SCHEDULE` (`0s,1s,2s`): one delay per attempt, the first before the first try. */
export const parseRetrySchedule = (text: string): ReadonlyArray<number> | undefined => {
  const delays = text.split(",").map(parseDuration);
  return delays.length > 0 && delays.every((d) => d !== undefined) ? (delays as number[]) : undefined;
};

/**
 * Delay before the next try after `attemptsMade` tries have failed, or `undefined` when the
 * schedule is exhausted and the delivery has failed for good.
 */
export const nextRetryDelay = (schedule: ReadonlyArray<number>, attemptsMade: number): number | undefined =>
  schedule[attemptsMade];

/** What an endpoint's answer means for the delivery. */
export type AttemptOutcome = "succeeded" | "failed" | "gone";

/** 2xx succeeds; 410 Gone also disables the endpoint; anything else (3xx too) is a failed try. */
export const outcomeOf = (status: number | undefined): AttemptOutcome => {
  if (status === undefined) return "failed";
  if (status >= 200 && status < 300) return "succeeded";
  return status === 410 ? "gone" : "failed";
};
