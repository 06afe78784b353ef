import { Result, Schema } from "effect";
import { Client } from "../resources/client.ts";
import { Event } from "../resources/event.ts";
import { Invoice } from "../resources/invoice.ts";
import { Proposal } from "../resources/proposal.ts";

/**
 * Webhook messages: what the application tells integrators, one typed member per event type. A
 * message is stored in the outbox as a versioned payload and delivered inside an envelope
 * `{id, type, created_at, data}`; `data` is the record concerned as the API shows it (always with
 * `id` and `name`).
 */

/** An invoice as webhooks show it: the API's invoice, named by its number. */
export const InvoiceMessageData = Schema.Struct({ ...Invoice.fields, name: Schema.String });

export const WEBHOOK_EVENT_TYPES = [
  "event.created", "event.inquiry", "invoice.sent", "invoice.paid", "proposal.approved", "client.created",
] as const;
/** The type of a webhook message, as receivers subscribe to it. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Every event type: when it fires (the spec's words) and the schema of its `data`. One list drives everything below. */
export const MESSAGE_TYPES = {
  "event.created": { description: "An event is created.", data: Event },
  "event.inquiry": { description: "A new online catering request arrives: the requester becomes a client, the request an event in inquiry.", data: Event },
  "invoice.sent": { description: "An invoice is marked sent.", data: InvoiceMessageData },
  "invoice.paid": { description: "An invoice is marked paid.", data: InvoiceMessageData },
  "proposal.approved": { description: "A client approves a proposal.", data: Proposal },
  "client.created": { description: "A client is created.", data: Client },
} as const satisfies Record<WebhookEventType, { readonly description: string; readonly data: Schema.Top }>;

type MessageTypes = typeof MESSAGE_TYPES;

const member = <T extends WebhookEventType>(type: T) =>
  Schema.Struct({ type: Schema.Literal(type), data: MESSAGE_TYPES[type].data as MessageTypes[T]["data"] });

/** A message as the application produces it: a discriminated union on `type`, each with its own `data`. */
export const WebhookMessage = Schema.Union([
  member("event.created"), member("event.inquiry"), member("invoice.sent"), member("invoice.paid"),
  member("proposal.approved"), member("client.created"),
]);
export type WebhookMessage = typeof WebhookMessage.Type;

const envelope = <T extends WebhookEventType>(type: T) =>
  Schema.Struct({
    id: Schema.String,
    type: Schema.Literal(type),
    created_at: Schema.String,
    data: MESSAGE_TYPES[type].data as MessageTypes[T]["data"],
  });

/** What a receiver gets, per type: `{id, type, created_at, data}`. */
export const WEBHOOK_ENVELOPES = {
  "event.created": envelope("event.created"),
  "event.inquiry": envelope("event.inquiry"),
  "invoice.sent": envelope("invoice.sent"),
  "invoice.paid": envelope("invoice.paid"),
  "proposal.approved": envelope("proposal.approved"),
  "client.created": envelope("client.created"),
} as const;

/** Any envelope. */
export const WebhookEnvelope = Schema.Union(Object.values(WEBHOOK_ENVELOPES));
export type WebhookEnvelope = typeof WebhookEnvelope.Type;

/**
 * Outbox payloads are versioned: a new payload version is added beside the old one (as `V2` in
 * this union), never edited in place, so rows written by an older API are still delivered after a
 * deploy. Version 1 is the message's `data` as is.
 */
export const MessagePayloadV1 = Schema.Struct({ version: Schema.Literal(1), data: Schema.Unknown });
export const MessagePayload = Schema.Union([MessagePayloadV1]);
export type MessagePayload = typeof MessagePayload.Type;

/** What the outbox stores for a message: its type and the current payload version, written through the schema. */
export const storedMessage = (message: WebhookMessage): { readonly type: WebhookEventType; readonly payload: MessagePayload } => {
  const { type, data } = Schema.encodeSync(WebhookMessage)(message);
  return { type, payload: { version: 1, data } };
};

/** A stored message as the fan-out reads it. */
export interface StoredMessage {
  readonly envelopeId: string;
  readonly type: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly createdAt: string;
  readonly payload: unknown;
}

const decodePayload = Schema.decodeUnknownResult(MessagePayload);
const decodeMessage = Schema.decodeUnknownResult(WebhookMessage);

/**
 * The exact bytes a delivery sends, fixed once at fan-out: every retry resends them unchanged,
 * so the envelope id and the signature stay the same and receivers can deduplicate. Read through
 * the versioned schemas; `undefined` for a payload this code cannot read (an unknown version, or
 * data that does not match its type).
 */
export const envelopeBody = (stored: StoredMessage): string | undefined => {
  const payload = decodePayload(stored.payload);
  if (Result.isFailure(payload)) return undefined;
  const message = decodeMessage({ type: stored.type, data: payload.success.data });
  if (Result.isFailure(message)) return undefined;
  return JSON.stringify({ id: stored.envelopeId, type: message.success.type, created_at: stored.createdAt, data: message.success.data });
};

const EXAMPLE_EVENT = {
  id: 42, name: "Spring gala", event_date: "2027-04-17", guests: 120, price_per_head: 42.5, currency: "EUR",
  event_type: "corporate", status: "inquiry", client_id: 7, created_at: "2026-11-21T10:00:00.000Z",
} as const satisfies Event;
const EXAMPLE_INVOICE = {
  id: 12, number: "INV-00012", status: "sent", currency: "EUR", client_id: 7, event_id: 42, issue_date: "2026-11-21",
  due_date: "2026-12-21", subtotal: 5100, tax: 1020, total: 6120, amount_paid: 0, balance_due: 6120,
  created_at: "2026-11-21T10:00:00.000Z", name: "INV-00012",
} as const satisfies typeof InvoiceMessageData.Type;
const at = <T extends WebhookEventType>(type: T, data: MessageTypes[T]["data"]["Type"]) => ({
  id: "evt_5c1b6e0b2f8e4f0fa3c1d2e3f4a5b6c7", type, created_at: "2026-11-21T10:00:00.000Z", data,
});

/** One realistic envelope per event type (the OpenAPI document's examples and the event catalog's). */
export const MESSAGE_EXAMPLES: { readonly [T in WebhookEventType]: (typeof WEBHOOK_ENVELOPES)[T]["Type"] } = {
  "event.created": at("event.created", EXAMPLE_EVENT),
  "event.inquiry": at("event.inquiry", {
    ...EXAMPLE_EVENT, name: "Inquiry from Grace Hopper", guests: 40, price_per_head: null, event_type: null,
  }),
  "invoice.sent": at("invoice.sent", EXAMPLE_INVOICE),
  "invoice.paid": at("invoice.paid", {
    ...EXAMPLE_INVOICE, status: "paid", amount_paid: 6120, balance_due: 0,
  }),
  "proposal.approved": at("proposal.approved", {
    id: 3, name: "Spring gala: 120 guests", status: "approved", event_id: 42, total: 5100, currency: "EUR",
    created_at: "2026-11-20T09:00:00.000Z", approved_at: "2026-11-21T10:00:00.000Z",
  }),
  "client.created": at("client.created", {
    id: 7, name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0101", company: "Analytical Engines Ltd",
    created_at: "2026-11-21T10:00:00.000Z",
  }),
};
