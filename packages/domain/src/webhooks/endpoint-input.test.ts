import { Result } from "effect";
import { describe, expect, it } from "vitest";
import {
  endpointEditDetails, endpointOrigin, isWebhookEventType, normalizedEndpointUrl, parseEndpointDescription, parseEndpointUrl, parseSubscription,
} from "./endpoint-input.ts";
import { WEBHOOK_EVENT_TYPES } from "./message.ts";

/** An endpoint as entered: the URL's shape and the subscription, each refusal with the text shown beside its field. */

describe("parseEndpointUrl", () => {
  it.each([
    ["https://hooks.example.com/platter", "https://hooks.example.com/platter"],
    ["  http://127.0.0.1:8080/in?x=1  ", "http://127.0.0.1:8080/in?x=1"],
    [`https://example.com/${"a".repeat(1980)}`, `https://example.com/${"a".repeat(1980)}`],
  ])("accepts %s", (raw, url) => {
    expect(Result.getOrThrow(parseEndpointUrl(raw))).toBe(url);
  });

  it.each([
    ["nothing", "", "Enter the URL that should receive the webhooks"],
    ["blanks", "   ", "Enter the URL that should receive the webhooks"],
    ["2,001 characters", `https://example.com/${"a".repeat(1981)}`, "A URL may be at most 2000 characters"],
    ["a space inside", "https://example.com/a b", "A URL may not contain spaces or control characters"],
    ["a control character", "https://example.com/\u0007", "A URL may not contain spaces or control characters"],
    ["no scheme", "example.com/hooks", "Enter a full URL, such as https://example.com/webhooks"],
    ["another scheme", "ftp://example.com/hooks", "The URL must start with https:// (or http://)"],
    ["javascript:", "javascript:alert(1)", "The URL must start with https:// (or http://)"],
    ["credentials", "https://user:secret@example.com/hooks", "The URL may not contain a user name or password"],
  ])("refuses %s", (_case, raw, message) => {
    expect(parseEndpointUrl(raw)).toMatchObject({ failure: { _tag: "InvalidInput", message } });
  });
});

describe("parseSubscription", () => {
  it("reads every type as none stored, and picked types in the catalog's order without duplicates", () => {
    expect(Result.getOrThrow(parseSubscription("all", ["client.created"]))).toEqual([]);
    expect(Result.getOrThrow(parseSubscription("some", ["client.created", "event.created", "client.created"]))).toEqual([
      "event.created", "client.created",
    ]);
  });

  it.each([
    ["no choice", "", [], "Choose every event type, or pick the ones to receive"],
    ["nothing picked", "some", [], "Pick at least one event type, or choose every event type"],
    ["an unknown type", "some", ["event.created", "<script>"], 'Unknown event type "<script>"'],
  ])("refuses %s", (_case, choice, picked, message) => {
    expect(parseSubscription(choice, picked)).toMatchObject({ failure: { _tag: "InvalidInput", message } });
  });

  it("knows the catalog's types and nothing else", () => {
    expect(WEBHOOK_EVENT_TYPES.every(isWebhookEventType)).toBe(true);
    expect(isWebhookEventType("event.deleted")).toBe(false);
  });
});

describe("endpointOrigin", () => {
  it.each([
    ["https://hooks.example.com/a?b=1#c", "https://hooks.example.com"],
    ["https://HOOKS.Example.com:443/x", "https://hooks.example.com"],
    ["http://hooks.example.com:80/x", "http://hooks.example.com"],
    ["http://hooks.example.com:8080/x", "http://hooks.example.com:8080"],
    ["https://bücher.example/x", "https://xn--bcher-kva.example"],
    ["http://2130706433/x", "http://127.0.0.1"],
    ["http://[::FFFF:127.0.0.1]:81/", "http://[::ffff:7f00:1]:81"],
  ])("counts %s as %s, as the HTTP client pools its connections", (url, origin) => {
    expect(endpointOrigin(url)).toBe(origin);
  });
});

describe("normalizedEndpointUrl", () => {
  it.each([
    ["https://hooks.example.com/platter", "https://hooks.example.com/platter"],
    ["HTTPS://Hooks.Example.COM/platter", "https://hooks.example.com/platter"],
    ["https://hooks.example.com:443/platter", "https://hooks.example.com/platter"],
    ["http://hooks.example.com:80/platter", "http://hooks.example.com/platter"],
    ["https://hooks.example.com", "https://hooks.example.com/"],
    ["https://hooks.example.com./platter", "https://hooks.example.com/platter"],
    ["https://hooks.example.com/platter#section", "https://hooks.example.com/platter"],
    ["  https://hooks.example.com/platter  ", "https://hooks.example.com/platter"],
    ["https://hooks.example.com/a/../platter", "https://hooks.example.com/platter"],
    ["https://bücher.example/in", "https://xn--bcher-kva.example/in"],
    ["https://[0:0:0:0:0:0:0:1]:8443/in", "https://[::1]:8443/in"],
    ["https://hooks.example.com/Platter", "https://hooks.example.com/platter"],
    ["https://hooks.example.com/platter/", "https://hooks.example.com/platter"],
    ["https://hooks.example.com/platter//", "https://hooks.example.com/platter"],
    ["https://hooks.example.com/", "https://hooks.example.com/"],
    ["https://hooks.example.com/platter?b=2&a=1", "https://hooks.example.com/platter?a=1&b=2"],
    // Kept apart: another query, port or scheme.
    ["https://hooks.example.com/platter?to=a", "https://hooks.example.com/platter?to=a"],
    ["https://hooks.example.com:8443/platter", "https://hooks.example.com:8443/platter"],
    ["http://hooks.example.com/platter", "http://hooks.example.com/platter"],
  ])("writes %s as %s", (url, normalized) => {
    expect(normalizedEndpointUrl(url)).toBe(normalized);
  });
});

describe("parseEndpointDescription", () => {
  it.each([
    ["  Billing sync  ", "Billing sync"],
    ["", null],
    ["   ", null],
    ["a\u0000b", "a\uFFFDb"],
    ["\uD800 lone", "\uFFFD lone"],
    ["é".repeat(500), "é".repeat(500)],
    ["😀".repeat(500), "😀".repeat(500)],
  ])("reads %j as %j", (raw, stored) => {
    expect(Result.getOrThrow(parseEndpointDescription(raw))).toBe(stored);
  });

  it.each([["x".repeat(501)], ["😀".repeat(501)]])("refuses a description longer than 500 characters", (raw) => {
    const refused = parseEndpointDescription(raw);
    expect(Result.isFailure(refused)).toBe(true);
    expect(Result.merge(refused)).toMatchObject({ _tag: "InvalidInput", message: "A description may be at most 500 characters" });
  });
});

describe("endpointEditDetails", () => {
  const before = { url: "https://a.example/", event_types: ["invoice.paid"], description: null, enabled: true };

  it("names only the fields that changed, before and after", () => {
    expect(endpointEditDetails(before, { ...before, description: "x", enabled: false })).toEqual({
      before: { description: null, enabled: true }, after: { description: "x", enabled: false },
    });
  });

  it("is undefined when nothing changed", () => {
    expect(endpointEditDetails(before, { ...before, event_types: ["invoice.paid"] })).toBeUndefined();
  });
});
