import { Result, Schema } from "effect";

/**
 * Webhook messages: what the application tells integrators, one typed member per event type.
 * A message is stored in the outbox as a versioned payload and delivered inside an envelope.
 */

export const WEBHOOK_EVENT_TYPES = [
  "event.created", "event.inquiry", "invoice.sent", "invoice.paid", "proposal.approved", "client.created",
] as const;
/** The type of a webhook message, as receivers subscribe to it. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** A message as the application produces it: its type and the record concerned (always with `id` and `name`). */
export interface WebhookMessage {
  readonly type: WebhookEventType;
  readonly data: { readonly id: number; readonly name: string } & Record<string, unknown>;
}

/**
 * Outbox payloads are a tagged, versioned union: a new shape is added beside the old one, never
 * edited in place, so rows written by an older API are still delivered after a deploy.
 */
export const MessagePayloadV1 = Schema.Struct({
  version: Schema.Literal(1),
  data: Schema.Record(Schema.String, Schema.Unknown),
});
export const MessagePayload = Schema.Union([MessagePayloadV1]);
export type MessagePayload = typeof MessagePayload.Type;

/** What the outbox stores for a message: its type and the current payload version. */
export const storedMessage = (message: WebhookMessage): { readonly type: WebhookEventType; readonly payload: MessagePayload } => ({
  type: message.type,
  payload: { version: 1, data: message.data },
});

/** A stored message as the fan-out reads it. */
export interface StoredMessage {
  readonly envelopeId: string;
  readonly type: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly createdAt: string;
  readonly payload: unknown;
}

/** What is delivered: `data` is the record concerned as the API shows it (always with `id` and `name`). */
export const WebhookEnvelope = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(WEBHOOK_EVENT_TYPES),
  created_at: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown),
});
export type WebhookEnvelope = typeof WebhookEnvelope.Type;

/**
 * The exact bytes a delivery sends, fixed once at fan-out: every retry resends them unchanged,
 * so the envelope id and the signature stay the same and receivers can deduplicate.
 * `undefined` for a payload version this code cannot read.
 */
export const envelopeBody = (stored: StoredMessage): string | undefined => {
  const payload = Schema.decodeUnknownResult(MessagePayload)(stored.payload);
  if (Result.isFailure(payload)) return undefined;
  return JSON.stringify({ id: stored.envelopeId, type: stored.type, created_at: stored.createdAt, data: payload.success.data });
};
