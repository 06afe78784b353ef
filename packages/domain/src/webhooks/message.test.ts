import { Result, Schema } from "effect";
import { describe, expect, it } from "vitest";
import {
  envelopeBody, MESSAGE_EXAMPLES, MESSAGE_TYPES, storedMessage, WEBHOOK_ENVELOPES, WEBHOOK_EVENT_TYPES, WebhookEnvelope,
  type WebhookMessage,
} from "./message.ts";

/** Typed, versioned webhook messages: written through the schema, read back through the versions. */

const examples = WEBHOOK_EVENT_TYPES.map((type) => [type, MESSAGE_EXAMPLES[type]] as const);

describe("webhook messages", () => {
  it("has one member, one envelope and one example per event type", () => {
    expect(Object.keys(MESSAGE_TYPES)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(Object.keys(WEBHOOK_ENVELOPES)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(Object.keys(MESSAGE_EXAMPLES)).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  it.each(examples)("the %s example is a valid envelope of its type, with an id and a name", (type, example) => {
    expect(Result.isSuccess(Schema.decodeUnknownResult(WEBHOOK_ENVELOPES[type], { onExcessProperty: "error" })(example))).toBe(true);
    expect(Result.isSuccess(Schema.decodeUnknownResult(WebhookEnvelope)(example))).toBe(true);
    expect(example.data).toMatchObject({ id: expect.any(Number), name: expect.any(String) });
  });

  it.each(examples)("a %s message round-trips: the same bytes as the record, in an envelope", (type, example) => {
    const message = { type, data: example.data } as WebhookMessage;
    const stored = storedMessage(message);
    expect(stored).toEqual({ type, payload: { version: 1, data: example.data } });
    const body = envelopeBody({ envelopeId: "evt_1", type: stored.type, createdAt: "2026-11-21T10:00:00.000Z", payload: stored.payload });
    expect(body).toBe(JSON.stringify({ id: "evt_1", type, created_at: "2026-11-21T10:00:00.000Z", data: example.data }));
  });

  it("refuses to write data that does not match its type", () => {
    const wrong = { type: "client.created", data: { id: 1, name: "Ada" } } as unknown as WebhookMessage;
    expect(() => storedMessage(wrong)).toThrow();
  });

  it.each([
    ["an unknown payload version", { version: 2, data: MESSAGE_EXAMPLES["client.created"].data }, "client.created"],
    ["no version", { data: MESSAGE_EXAMPLES["client.created"].data }, "client.created"],
    ["data of another type", { version: 1, data: MESSAGE_EXAMPLES["client.created"].data }, "invoice.paid"],
    ["an unknown type", { version: 1, data: MESSAGE_EXAMPLES["client.created"].data }, "client.deleted"],
    ["data without a name", { version: 1, data: { ...MESSAGE_EXAMPLES["client.created"].data, name: undefined } }, "client.created"],
  ])("reads nothing from %s", (_, payload, type) => {
    expect(envelopeBody({ envelopeId: "evt_1", type, createdAt: "2026-11-21T10:00:00.000Z", payload })).toBeUndefined();
  });
});
