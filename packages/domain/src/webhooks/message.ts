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

/** An invoice as webhooks show it: the API's invoice, named by its number (`{...invoice, name: invoice.number}`). */
export const InvoiceMessageData = Schema.Struct({ ...Invoice.fields, name: Schema.String });
export type InvoiceMessageData = typeof InvoiceMessageData.Type;

/** One event type: its name as receivers subscribe to it, when it fires, its `data` schema and a realistic `data`. */
export interface MessageType<Type extends string = string, Data extends Schema.Top = Schema.Top> {
  readonly type: Type;
  /** One line, for the OpenAPI document and the event catalog. */
  readonly description: string;
  readonly data: Data;
  readonly example: Data["Type"];
}

const messageType = <const Type extends string, Data extends Schema.Top>(
  type: Type,
  description: string,
  data: Data,
  example: NoInfer<Data["Type"]>,
): MessageType<Type, Data> => ({ type, description, data, example });

const EXAMPLE_EVENT: Event = {
  id: 42, name: "Spring gala", event_date: "2027-04-17", guests: 120, price_per_head: 42.5, currency: "EUR",
  event_type: "corporate", status: "inquiry", client_id: 7, created_at: "2026-11-21T10:00:00.000Z",
};
const EXAMPLE_INQUIRY: Event = {
  id: 43, name: "Inquiry from Grace Hopper", event_date: "2027-06-05", guests: 40, price_per_head: null, currency: "EUR",
  event_type: null, status: "inquiry", client_id: 8, created_at: "2026-11-21T10:00:00.000Z",
};
const EXAMPLE_INVOICE: InvoiceMessageData = {
  id: 12, number: "INV-00012", status: "sent", currency: "EUR", client_id: 7, event_id: 42, issue_date: "2026-11-21",
  due_date: "2026-12-21", subtotal: 5100, tax: 1020, total: 6120, amount_paid: 0, balance_due: 6120,
  created_at: "2026-11-21T10:00:00.000Z", name: "INV-00012",
};
const EXAMPLE_PROPOSAL: Proposal = {
  id: 3, name: "Spring gala: 120 guests, three courses", status: "approved", event_id: 42, total: 5100, currency: "EUR",
  created_at: "2026-11-20T09:00:00.000Z", approved_at: "2026-11-21T10:00:00.000Z",
};
const EXAMPLE_CLIENT: Client = {
  id: 7, name: "Ada Lovelace", email: "ada@example.com", phone: "+44 20 7946 0101", company: "Analytical Engines Ltd",
  created_at: "2026-11-21T10:00:00.000Z",
};

/**
 * Every event type, in the order documents list them. This one list drives everything below:
 * `WEBHOOK_EVENT_TYPES`, the message union, the outbox payloads, the envelopes and their
 * examples, the OpenAPI `webhooks` and the event catalog. A new event type is one entry here.
 */
export const MESSAGE_TYPES = [
  messageType("event.created", "A new event was created through the API.", Event, EXAMPLE_EVENT),
  messageType(
    "event.inquiry",
    "A new online catering request arrived: the requester became a client and the request an event in inquiry status.",
    Event,
    EXAMPLE_INQUIRY,
  ),
  messageType("invoice.sent", "An invoice was marked sent.", InvoiceMessageData, EXAMPLE_INVOICE),
  messageType("invoice.paid", "An invoice was marked paid in full.", InvoiceMessageData, {
    ...EXAMPLE_INVOICE, status: "paid", amount_paid: 6120, balance_due: 0,
  }),
  messageType("proposal.approved", "A client approved a proposal.", Proposal, EXAMPLE_PROPOSAL),
  messageType("client.created", "A new client was created through the API.", Client, EXAMPLE_CLIENT),
] as const;

type MessageTypes = typeof MESSAGE_TYPES;
type MessageTypeOf<T extends WebhookEventType> = Extract<MessageTypes[number], { readonly type: T }>;
/** Per-entry types of `MESSAGE_TYPES.map(…)`: tuples as long as the list, so each union keeps one typed member per event type. */
type EachType<List extends ReadonlyArray<MessageType>> = { readonly [K in keyof List]: List[K]["type"] };
type EachMessage<List extends ReadonlyArray<MessageType>> = { readonly [K in keyof List]: MessageSchema<List[K]> };
type EachEnvelope<List extends ReadonlyArray<MessageType>> = { readonly [K in keyof List]: EnvelopeSchema<List[K]> };

/** Every event type, as receivers subscribe to them. */
export const WEBHOOK_EVENT_TYPES = MESSAGE_TYPES.map(({ type }) => type) as unknown as EachType<MessageTypes>;
/** The type of a webhook message, as receivers subscribe to it. */
export type WebhookEventType = MessageTypes[number]["type"];

/** The schema of one type's message as the application produces it. */
type MessageSchema<M extends MessageType> = Schema.Struct<{ readonly type: Schema.Literal<M["type"]>; readonly data: M["data"] }>;
const messageSchema = <M extends MessageType>({ type, data }: M): MessageSchema<M> =>
  Schema.Struct({ type: Schema.Literal(type), data }) as MessageSchema<M>;

/** A message as the application produces it: a union discriminated on `type`, each member with its own `data`. */
export const WebhookMessage = Schema.Union(
  MESSAGE_TYPES.map(messageSchema) as unknown as EachMessage<MessageTypes>,
);
export type WebhookMessage = typeof WebhookMessage.Type;

/** The schema of one type's envelope, what a receiver gets. */
type EnvelopeSchema<M extends MessageType> = Schema.Struct<{
  readonly id: Schema.String;
  readonly type: Schema.Literal<M["type"]>;
  readonly created_at: Schema.String;
  readonly data: M["data"];
}>;
const envelopeSchema = <M extends MessageType>({ type, data }: M): EnvelopeSchema<M> =>
  Schema.Struct({ id: Schema.String, type: Schema.Literal(type), created_at: Schema.String, data }) as EnvelopeSchema<M>;

const ENVELOPE_LIST = MESSAGE_TYPES.map(envelopeSchema) as unknown as EachEnvelope<MessageTypes>;

/** What a receiver gets, per type: `{id, type, created_at, data}` (`id` is `evt_…`, `created_at` ISO 8601 UTC with milliseconds). */
export const WEBHOOK_ENVELOPES = Object.fromEntries(
  MESSAGE_TYPES.map((messageType, index) => [messageType.type, ENVELOPE_LIST[index]]),
) as { readonly [T in WebhookEventType]: EnvelopeSchema<MessageTypeOf<T>> };

/** Any envelope: a union discriminated on `type`. */
export const WebhookEnvelope = Schema.Union(ENVELOPE_LIST);
export type WebhookEnvelope = typeof WebhookEnvelope.Type;

/** One realistic envelope per event type (the OpenAPI document's examples and the event catalog's). */
export const MESSAGE_EXAMPLES = Object.fromEntries(
  MESSAGE_TYPES.map(({ type, example }) => [
    type,
    { id: "evt_5c1b6e0b2f8e4f0fa3c1d2e3f4a5b6c7", type, created_at: "2026-11-21T10:00:00.125Z", data: example },
  ]),
) as { readonly [T in WebhookEventType]: EnvelopeSchema<MessageTypeOf<T>>["Type"] };

/**
 * Outbox payload versions, each a function of a type's `data` schema. A new payload version is
 * added beside the old ones (a `payloadV2`, appended to `payloadVersions`), never edited in
 * place: rows written by an older API must still be read after a deploy. The last version is the
 * one written.
 *
 * Version 1: `data` is the record as the API showed it when the change was made, exactly as it
 * is sent (a later version that stores it differently also says in `envelopeBody` how it is sent).
 */
const payloadV1 = <Data extends Schema.Top>(data: Data) => Schema.Struct({ version: Schema.Literal(1), data });

/** The payload versions a message of this `data` schema may be stored in, oldest first. */
const payloadVersions = <Data extends Schema.Top>(data: Data) => [payloadV1(data)] as const;

/** The outbox payload of one event type: the union of its versions. */
const payloadOf = <Data extends Schema.Top>(data: Data) => Schema.Union(payloadVersions(data));

/** Version 1 of the outbox payload, of any event type. */
export const MessagePayloadV1 = Schema.Union(MESSAGE_TYPES.map(({ data }) => payloadV1(data)));
/** An outbox payload of any event type and any version still read. */
export const MessagePayload = Schema.Union(MESSAGE_TYPES.map(({ data }) => payloadOf(data)));
export type MessagePayload = typeof MessagePayload.Type;

const PAYLOADS = new Map<string, {
  readonly encodeCurrent: (data: unknown) => MessagePayload;
  readonly decode: (payload: unknown) => Result.Result<MessagePayload, Schema.SchemaError>;
}>(
  MESSAGE_TYPES.map(({ type, data }) => {
    const versions = payloadVersions(data);
    const current = versions[versions.length - 1]!;
    const encode = Schema.encodeUnknownSync(current);
    return [type, {
      encodeCurrent: (value: unknown) => encode({ version: current.fields.version.literal, data: value }) as MessagePayload,
      // Refuses unknown fields too: what is read back must be exactly a record of its type.
      decode: Schema.decodeUnknownResult(Schema.Union(versions), { onExcessProperty: "error" }) as (payload: unknown) =>
        Result.Result<MessagePayload, Schema.SchemaError>,
    }] as const;
  }),
);

/**
 * What the outbox stores for a message: its type and the payload in the current version, written
 * through the type's schema (throws on data that does not match it; unknown fields are dropped).
 */
export const storedMessage = (message: WebhookMessage): { readonly type: WebhookEventType; readonly payload: MessagePayload } => ({
  type: message.type,
  payload: PAYLOADS.get(message.type)!.encodeCurrent(message.data),
});

/** A stored message as the fan-out reads it. */
export interface StoredMessage {
  readonly envelopeId: string;
  readonly type: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly createdAt: string;
  readonly payload: unknown;
}

/**
 * The exact bytes a delivery sends, fixed once at fan-out: every retry resends them unchanged,
 * so the envelope id and the signature stay the same and receivers can deduplicate. The payload
 * is read through its type's versioned schema; `undefined` for a payload this code cannot read (an
 * unknown type or version, or data that does not match its type).
 *
 * Version 1 stores `data` as sent, so once it is validated the stored object itself is sent: its
 * key order (the outbox's jsonb column keeps its own) and its numbers stay byte for byte what
 * receivers got before messages were typed.
 */
export const envelopeBody = (stored: StoredMessage): string | undefined => {
  const payloads = PAYLOADS.get(stored.type);
  if (payloads === undefined || Result.isFailure(payloads.decode(stored.payload))) return undefined;
  const { data } = stored.payload as { readonly data: unknown };
  return JSON.stringify({ id: stored.envelopeId, type: stored.type, created_at: stored.createdAt, data });
};
