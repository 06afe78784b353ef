import { Schema } from "effect";
import {
  envelopeBody, MESSAGE_TYPES, storedMessage, WEBHOOK_ENVELOPES, type WebhookEnvelope, type WebhookEventType, type WebhookMessage,
} from "./message.ts";

/**
 * Example messages, generated from the domain's message schemas: each type's realistic `data`
 * (typed by its schema in `MESSAGE_TYPES`) is written through the outbox's payload schema and
 * rendered by `envelopeBody`, the code every delivery's bytes come from, then checked against the
 * type's envelope schema. So an example is exactly what a receiver of that type gets. Pure: the
 * event catalog shows them, and a test event sends `exampleMessage(type)`.
 */

/** The envelope id and time every example shows (a real delivery has its own). */
export const EXAMPLE_ENVELOPE_ID = "evt_5c1b6e0b2f8e4f0fa3c1d2e3f4a5b6c7";
export const EXAMPLE_CREATED_AT = "2026-11-21T10:00:00.125Z";

/** One event type as the catalog shows it: when it fires, an example envelope and its body as sent. */
export interface MessageExample {
  readonly type: WebhookEventType;
  readonly description: string;
  /** The example envelope `{id, type, created_at, data}`, decoded by the type's envelope schema. */
  readonly envelope: WebhookEnvelope;
  /** The exact body a delivery of it sends (compact JSON, as signed). */
  readonly body: string;
}

const byType = new Map(MESSAGE_TYPES.map((messageType) => [messageType.type as WebhookEventType, messageType]));

/** The message the application would record for `type`: its realistic example `data`. */
export const exampleMessage = (type: WebhookEventType): WebhookMessage => {
  const messageType = byType.get(type);
  if (messageType === undefined) throw new Error(`unknown event type ${type}`);
  return { type, data: messageType.example } as WebhookMessage;
};

/**
 * The example of `type`, generated through the message schemas: stored as the outbox stores it,
 * rendered as a delivery renders it, and decoded by the type's envelope schema (unknown fields
 * refused). Throws only if the domain's own example does not match its schema, a bug its test
 * catches.
 */
export const messageExample = (
  type: WebhookEventType,
  envelope: { readonly id?: string; readonly created_at?: string } = {},
): MessageExample => {
  const stored = storedMessage(exampleMessage(type));
  const body = envelopeBody({
    envelopeId: envelope.id ?? EXAMPLE_ENVELOPE_ID,
    type: stored.type,
    createdAt: envelope.created_at ?? EXAMPLE_CREATED_AT,
    payload: stored.payload,
  });
  if (body === undefined) throw new Error(`the example of ${type} does not match its payload schema`);
  const decoded = Schema.decodeUnknownSync(WEBHOOK_ENVELOPES[type] as Schema.Codec<unknown, unknown>, { onExcessProperty: "error" })(JSON.parse(body));
  return { type, description: byType.get(type)!.description, envelope: decoded as WebhookEnvelope, body };
};

/** Every event type's example, in the catalog's order (that of `MESSAGE_TYPES`). */
export const messageExamples = (): ReadonlyArray<MessageExample> => MESSAGE_TYPES.map(({ type }) => messageExample(type));
