import { Result, Schema } from "effect";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { Client } from "../resources/client.ts";
import type { Event } from "../resources/event.ts";
import type { Invoice } from "../resources/invoice.ts";
import {
  envelopeBody, MESSAGE_EXAMPLES, MESSAGE_TYPES, storedMessage, type StoredMessage, WEBHOOK_ENVELOPES, WEBHOOK_EVENT_TYPES,
  WebhookEnvelope, type WebhookEventType, WebhookMessage,
} from "./message.ts";

/** Typed, versioned webhook messages: written through the schema, read back through the versions. */

const ID = "evt_0f3c2a1b9d8e7f60";
const CREATED_AT = "2026-11-21T10:00:00.125Z";

const event: Event = {
  id: 42, name: "Spring gala", event_date: "2027-04-17", guests: 120, price_per_head: 42.5, currency: "EUR",
  event_type: "corporate", status: "inquiry", client_id: 7, created_at: "2026-11-21T10:00:00.000Z",
};
const invoice: Invoice = {
  id: 12, number: "INV-00012", status: "sent", currency: "EUR", client_id: null, event_id: 42, issue_date: "2026-11-21",
  due_date: "2026-12-21", subtotal: 0.1, tax: 0.02, total: 0.12, amount_paid: 0, balance_due: 0.12, created_at: "2026-11-21T10:00:00.000Z",
};
const client: Client = { id: 7, name: "Anna Müller 🍰", email: null, phone: "+49 30 1234567", company: null, created_at: "2026-11-21T10:00:00.000Z" };

/** Each type's message as the application records it (the API record, spread; an invoice named by its number). */
const MESSAGES: ReadonlyArray<WebhookMessage> = [
  { type: "event.created", data: event },
  { type: "event.inquiry", data: { ...event, name: "Inquiry from Grace Hopper", price_per_head: null, event_type: null } },
  { type: "invoice.sent", data: { ...invoice, name: invoice.number } },
  { type: "invoice.paid", data: { ...invoice, status: "paid", amount_paid: 0.12, balance_due: 0, name: invoice.number } },
  {
    type: "proposal.approved",
    data: {
      id: 3, name: "Spring gala: 120 guests", status: "approved", event_id: 42, total: 5100, currency: "EUR",
      created_at: "2026-11-20T09:00:00.000Z", approved_at: "2026-11-21T10:00:00.000Z",
    },
  },
  { type: "client.created", data: client },
];

/** What the loose, untyped code sent for a message: the record exactly as recorded, in an envelope. */
const looseBody = (message: WebhookMessage, data: unknown = message.data): string =>
  JSON.stringify({ id: ID, type: message.type, created_at: CREATED_AT, data });

const stored = (type: string, payload: unknown): StoredMessage => ({ envelopeId: ID, type, createdAt: CREATED_AT, payload });

/** The outbox is a jsonb column: it gives objects back with their keys reordered (shorter first). */
const asJsonb = (data: object): object =>
  Object.fromEntries(Object.entries(data).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)));

describe("the event type list", () => {
  it("drives the types, the envelopes and the examples: one each per type, in one order", () => {
    expect(MESSAGE_TYPES.map(({ type }) => type)).toEqual([
      "event.created", "event.inquiry", "invoice.sent", "invoice.paid", "proposal.approved", "client.created",
    ]);
    expect([...WEBHOOK_EVENT_TYPES]).toEqual(MESSAGE_TYPES.map(({ type }) => type));
    expect(Object.keys(WEBHOOK_ENVELOPES)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(Object.keys(MESSAGE_EXAMPLES)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(MESSAGES.map(({ type }) => type)).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  it.each(MESSAGE_TYPES.map((entry) => [entry.type, entry] as const))("describes %s in one sentence", (_type, entry) => {
    expect(entry.description).toMatch(/^[A-Z][^\n]*\.$/);
  });

  it.each(WEBHOOK_EVENT_TYPES.map((type) => [type] as const))("the %s example is a valid envelope of its type, with an id and a name", (type) => {
    const example = MESSAGE_EXAMPLES[type];
    const strict = { onExcessProperty: "error" } as const;
    expect(Result.isSuccess(Schema.decodeUnknownResult(WEBHOOK_ENVELOPES[type], strict)(example))).toBe(true);
    expect(Result.getOrThrow(Schema.decodeUnknownResult(WebhookEnvelope, strict)(JSON.parse(JSON.stringify(example))))).toEqual(example);
    expect(example.type).toBe(type);
    expect(example.data).toMatchObject({ id: expect.any(Number), name: expect.any(String) });
  });
});

describe("WebhookMessage", () => {
  it("is a union discriminated on type: data must be that type's record", () => {
    expectTypeOf({ type: "client.created" as const, data: client }).toExtend<WebhookMessage>();
    expectTypeOf({ type: "invoice.paid" as const, data: { ...invoice, name: invoice.number } }).toExtend<WebhookMessage>();
    expectTypeOf({ type: "client.created" as const, data: event }).not.toExtend<WebhookMessage>();
    expectTypeOf({ type: "invoice.paid" as const, data: invoice }).not.toExtend<WebhookMessage>(); // no name
    expectTypeOf({ type: "client.deleted" as const, data: client }).not.toExtend<WebhookMessage>();
    expectTypeOf<WebhookMessage["type"]>().toEqualTypeOf<WebhookEventType>();
    expectTypeOf<Extract<WebhookEnvelope, { type: "invoice.paid" }>["data"]["balance_due"]>().toEqualTypeOf<number>();
  });
});

describe("storedMessage then envelopeBody", () => {
  it.each(MESSAGES.map((message) => [message.type, message] as const))("%s: round-trips to the bytes sent before typing", (type, message) => {
    const written = storedMessage(message);
    expect(written).toEqual({ type, payload: { version: 1, data: message.data } });
    const body = envelopeBody(stored(written.type, written.payload));
    expect(body).toBe(looseBody(message));
    expect(Result.getOrThrow(Schema.decodeUnknownResult(WebhookEnvelope, { onExcessProperty: "error" })(JSON.parse(body!)))).toEqual({
      id: ID, type, created_at: CREATED_AT, data: message.data,
    });
  });

  it.each(MESSAGES.map((message) => [message.type, message] as const))("%s: a payload read back from jsonb is sent byte for byte as stored", (_type, message) => {
    const { type, payload } = storedMessage(message);
    const fromJsonb = { ...payload, data: asJsonb(payload.data) };
    expect(envelopeBody(stored(type, fromJsonb))).toBe(looseBody(message, fromJsonb.data));
  });

  it("writes invoices with name last and client.created as the API record", () => {
    expect(Object.keys(storedMessage(MESSAGES[2]!).payload.data).at(-1)).toBe("name");
    expect(JSON.stringify(storedMessage({ type: "client.created", data: client }).payload.data)).toBe(JSON.stringify(client));
  });

  it("drops fields its type does not have", () => {
    const detail = { ...event, dishes: [{ id: 1, recipe_id: 2, recipe_name: "Soup", course: "starter", servings: 120 }] };
    expect(storedMessage({ type: "event.created", data: detail }).payload).toEqual({ version: 1, data: event });
  });

  it.each<[string, unknown]>([
    ["a missing field", { id: 7, name: "Ada" }],
    ["a field of the wrong type", { ...client, id: "7" }],
    ["a non-integer id", { ...client, id: 7.5 }],
  ])("refuses to write data with %s", (_, data) => {
    expect(() => storedMessage({ type: "client.created", data } as WebhookMessage)).toThrow();
  });
});

describe("envelopeBody reads nothing it cannot type", () => {
  const data = client;
  it.each<[string, string, unknown]>([
    ["an unknown payload version", "client.created", { version: 2, data }],
    ["a version written as a string", "client.created", { version: "1", data }],
    ["no version", "client.created", { data }],
    ["no data", "client.created", { version: 1 }],
    ["data of another type", "invoice.paid", { version: 1, data }],
    ["an invoice without its name", "invoice.sent", { version: 1, data: invoice }],
    ["an unknown type", "client.deleted", { version: 1, data }],
    ["data without a name", "client.created", { version: 1, data: { ...data, name: undefined } }],
    ["data with a field of the wrong type", "client.created", { version: 1, data: { ...data, email: 7 } }],
    ["data with a field its type does not have", "client.created", { version: 1, data: { ...data, notes: "VIP" } }],
    ["a proposal in an unknown status", "proposal.approved", { version: 1, data: { ...MESSAGE_EXAMPLES["proposal.approved"].data, status: "won" } }],
    ["an unknown field beside the version", "client.created", { version: 1, data, extra: true }],
    ["a payload that is not an object", "client.created", "{\"version\":1}"],
    ["a null payload", "client.created", null],
  ])("%s → undefined", (_, type, payload) => {
    expect(envelopeBody(stored(type, payload))).toBeUndefined();
  });
});
