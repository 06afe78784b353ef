import { Schema } from "effect";

/** Webhook events: the business events integrators subscribe to, and the envelope they receive. */

export const WEBHOOK_EVENT_TYPES = [
  "event.created", "event.inquiry", "invoice.sent", "invoice.paid", "proposal.approved", "client.created",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What is delivered: `data` is the record concerned as the API shows it (always with `id` and `name`). */
export const WebhookEnvelope = Schema.Struct({
  id: Schema.String,
  type: Schema.Literals(WEBHOOK_EVENT_TYPES),
  created_at: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown),
});
export type WebhookEnvelope = typeof WebhookEnvelope.Type;

/** A business event as written to the outbox, before it is wrapped in an envelope. */
export interface BusinessEvent {
  readonly type: WebhookEventType;
  readonly data: { readonly id: number; readonly name: string } & Record<string, unknown>;
}
