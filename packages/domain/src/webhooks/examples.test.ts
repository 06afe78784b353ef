import { Result, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { EXAMPLE_CREATED_AT, EXAMPLE_ENVELOPE_ID, exampleMessage, messageExample, messageExamples } from "./examples.ts";
import { MESSAGE_EXAMPLES, MESSAGE_TYPES, storedMessage, WEBHOOK_ENVELOPES, WEBHOOK_EVENT_TYPES, WebhookMessage } from "./message.ts";

/** Example messages: one per event type, generated through the message schemas, each exactly what a receiver of its type gets. */

const strict = { onExcessProperty: "error" } as const;
const TYPES = WEBHOOK_EVENT_TYPES.map((type) => [type] as const);

describe("messageExamples", () => {
  it("has one example per event type, in the catalog's order, each with its type's description", () => {
    expect(messageExamples().map(({ type, description }) => ({ type, description }))).toEqual(
      MESSAGE_TYPES.map(({ type, description }) => ({ type, description })),
    );
  });

  it.each(TYPES)("the %s example decodes with its own envelope schema, unknown fields refused", (type) => {
    const example = messageExample(type);
    expect(Result.getOrThrow(Schema.decodeUnknownResult(WEBHOOK_ENVELOPES[type], strict)(JSON.parse(example.body)))).toEqual(example.envelope);
    expect(example.envelope).toEqual(MESSAGE_EXAMPLES[type]);
    expect(example.envelope).toMatchObject({ id: EXAMPLE_ENVELOPE_ID, type, created_at: EXAMPLE_CREATED_AT });
  });

  it.each(TYPES)("the %s example does not decode as another type's envelope", (type) => {
    const others = WEBHOOK_EVENT_TYPES.filter((other) => other !== type);
    const decoded = others.map((other) => Result.isSuccess(Schema.decodeUnknownResult(WEBHOOK_ENVELOPES[other], strict)(JSON.parse(messageExample(type).body))));
    expect(decoded).toEqual(others.map(() => false));
  });

  it.each(TYPES)("the %s body is the compact JSON a delivery signs: the envelope in id, type, created_at, data order", (type) => {
    const { body, envelope } = messageExample(type);
    expect(body).toBe(JSON.stringify({ id: envelope.id, type, created_at: envelope.created_at, data: envelope.data }));
  });

  it("takes a given envelope id and time", () => {
    const example = messageExample("client.created", { id: "evt_test", created_at: "2027-01-02T03:04:05.006Z" });
    expect(example.envelope).toMatchObject({ id: "evt_test", created_at: "2027-01-02T03:04:05.006Z" });
  });
});

describe("exampleMessage", () => {
  it.each(TYPES)("the %s message is a valid message the outbox stores", (type) => {
    const message = exampleMessage(type);
    expect(Result.isSuccess(Schema.decodeUnknownResult(WebhookMessage, strict)(message))).toBe(true);
    expect(storedMessage(message)).toEqual({ type, payload: { version: 1, data: MESSAGE_EXAMPLES[type].data } });
  });
});
