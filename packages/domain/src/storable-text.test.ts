import { Result, Schema } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { InvalidInput } from "./errors.ts";
import { decodeInput } from "./input.ts";
import { ClientCreate } from "./resources/client.ts";
import { EventCreate, InquiryReceive } from "./resources/event.ts";
import { parseTriggerBody } from "./sandbox.ts";
import {
  ATTEMPT_TEXT_MAX_CHARACTERS, CUT_MARKER, ECHOED_INPUT_MAX_CHARACTERS, ERROR_TEXT_MAX_CHARACTERS, storableText, storableTextOrNull,
} from "./storable-text.ts";
import { parseEventTypes } from "./webhooks/delivery.ts";
import { parseSubscription } from "./webhooks/endpoint-input.ts";
import { parseListenerReport, parseListenRequest } from "./webhooks/local-listener.ts";

/** Whether PostgreSQL's `text` takes `text` as it is: no NUL, and a UTF-8 form (no lone surrogate). */
const storable = (text: string): boolean => !text.includes("\u0000") && text.isWellFormed();
const characters = (text: string): number => [...text].length;

/** Texts as input brings them: lone surrogates (either half), NULs, emoji, combining marks, anything. */
const piece = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.string(),
  fc.constantFrom("\u0000", "\uD800", "\uDBFF", "\uDC00", "\uDFFF", "😀", "👩‍👩‍👧", "e\u0301", "\uFFFD", CUT_MARKER, "\u0000\u0000"),
);
const anyText = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(""));
const bound = fc.integer({ min: 1, max: 40 });

/** What `storableText` must give: the cleaned text (each bad code point one U+FFFD), its first `max - 1` and `…` when longer. */
const reference = (text: string, max: number): string => {
  const points = [...text.toWellFormed().replaceAll("\u0000", "\uFFFD")];
  return points.length <= max ? points.join("") : [...points.slice(0, max - 1), CUT_MARKER].join("");
};

/** Megabyte inputs a hostile caller sends. */
const MEGABYTE_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ["a million letters", "x".repeat(1_000_000)],
  ["a million NULs", "\u0000".repeat(1_000_000)],
  ["half a million emoji", "😀".repeat(500_000)],
  ["a million lone high surrogates", "\uD800".repeat(1_000_000)],
  ["a million lone low surrogates", "\uDC00".repeat(1_000_000)],
  ["letters and a NUL at the end", `${"x".repeat(1_000_000)}\u0000`],
];

describe("storableText", () => {
  it("is the reference: cleaned, and cut to the bound with a marker (property)", () => {
    fc.assert(fc.property(anyText, bound, (text, max) => {
      expect(storableText(text, max)).toBe(reference(text, max));
    }), { numRuns: 2_000 });
  });

  it("is bounded, storable, idempotent, and changes nothing in a text already fine and short (property)", () => {
    let unchanged = 0;
    let changed = 0;
    fc.assert(fc.property(anyText, bound, (text, max) => {
      const out = storableText(text, max);
      expect(characters(out)).toBeLessThanOrEqual(max);
      expect(storable(out)).toBe(true);
      expect(storableText(out, max)).toBe(out);
      const fine = storable(text) && characters(text) <= max;
      expect(out === text).toBe(fine);
      if (fine) unchanged++;
      else changed++;
    }), { numRuns: 2_000 });
    expect(unchanged).toBeGreaterThan(0);
    expect(changed).toBeGreaterThan(0);
  });

  it("never splits a surrogate pair: a cut emoji text keeps whole emoji and the marker", () => {
    expect(storableText("😀".repeat(10), 4)).toBe(`😀😀😀${CUT_MARKER}`);
    expect(storableText("a😀".repeat(10), 4)).toBe(`a😀a${CUT_MARKER}`);
  });

  it.each<[string, string, number, string]>([
    ["a NUL", "a\u0000b", 10, "a\uFFFDb"],
    ["a lone high surrogate", "a\uD800b", 10, "a\uFFFDb"],
    ["a lone low surrogate", "\uDC00", 10, "\uFFFD"],
    ["a text at the bound", "abcde", 5, "abcde"],
    ["a text one past the bound", "abcdef", 5, `abcd${CUT_MARKER}`],
    ["a bound of one", "abc", 1, CUT_MARKER],
    ["the empty text", "", 5, ""],
  ])("%s: %j at %i is %j", (_label, text, max, expected) => {
    expect(storableText(text, max)).toBe(expected);
  });

  it.each(MEGABYTE_TEXTS)("%s: cut to each bound, storable", (_label, text) => {
    for (const max of [ECHOED_INPUT_MAX_CHARACTERS, ERROR_TEXT_MAX_CHARACTERS, ATTEMPT_TEXT_MAX_CHARACTERS]) {
      const out = storableText(text, max);
      expect(characters(out)).toBe(max);
      expect(out.endsWith(CUT_MARKER)).toBe(true);
      expect(storable(out)).toBe(true);
    }
  });

  it("keeps an absent text absent", () => {
    expect([storableTextOrNull(null, 5), storableTextOrNull(undefined, 5), storableTextOrNull("a\u0000", 5)]).toEqual([null, null, "a\uFFFD"]);
  });
});

/** Every decoder of input whose error text is answered and stored: the API's creates, the CLI routes' bodies, the area's fields. */
const DECODERS: ReadonlyArray<readonly [string, (body: unknown) => Result.Result<unknown, InvalidInput>]> = [
  ["ClientCreate", (body) => decodeInput(ClientCreate as Schema.Codec<unknown, unknown>, body)],
  ["EventCreate", (body) => decodeInput(EventCreate as Schema.Codec<unknown, unknown>, body)],
  ["InquiryReceive", (body) => decodeInput(InquiryReceive as Schema.Codec<unknown, unknown>, body)],
  ["parseTriggerBody", parseTriggerBody],
  ["parseListenerReport", parseListenerReport],
];

/** Fields each decoder knows, so that values are tried where a schema looks at them too. */
const KNOWN_FIELDS = [
  "name", "email", "phone", "company", "event_date", "guests", "price_per_head", "title", "client_id", "type", "delivery_id",
  "lease_token", "status_code", "duration_ms", "error", "response_body",
];

const anyValue = fc.oneof(anyText, fc.anything(), fc.array(anyText, { maxLength: 3 }), fc.dictionary(anyText, anyText, { maxKeys: 3 }));
const fieldName = fc.oneof(anyText, fc.constantFrom(...KNOWN_FIELDS));
const anyBody = fc.oneof(
  fc.dictionary(fieldName, anyValue, { maxKeys: 5 }),
  fc.tuple(fieldName, anyValue).map(([name, value]) => ({ name: "Ann", [name]: value })),
  anyValue,
);

/** The error text of a failed decode ("" for a success, which answers no text). */
const errorTextOf = (result: Result.Result<unknown, InvalidInput>): string => (Result.isFailure(result) ? result.failure.message : "");

/** Whether an error text may be answered and stored as it is. */
const boundedAndStorable = (text: string): boolean => storable(text) && characters(text) <= ERROR_TEXT_MAX_CHARACTERS;

describe("every error text of input decoding is storable and bounded", () => {
  it.each(DECODERS)("%s, for any body (property)", (_label, decode) => {
    let failures = 0;
    fc.assert(fc.property(anyBody, (body) => {
      const result = decode(body);
      if (Result.isFailure(result)) failures++;
      expect(boundedAndStorable(errorTextOf(result))).toBe(true);
    }), { numRuns: 1_000 });
    expect(failures).toBeGreaterThan(0);
  });

  it.each(DECODERS)("%s, for megabyte field names and values", (_label, decode) => {
    for (const [, text] of MEGABYTE_TEXTS) {
      for (const body of [{ name: "x", [text]: 1 }, { [text]: text }, { name: text }, { type: text }, { error: text }, text]) {
        const result = decode(body);
        expect(Result.isFailure(result)).toBe(true);
        expect(boundedAndStorable(errorTextOf(result))).toBe(true);
      }
    }
  });

  it("names an unknown field by its first characters, marked as cut", () => {
    const result = decodeInput(ClientCreate, { name: "x", ["y".repeat(1_000_000)]: 1 });
    expect(errorTextOf(result)).toBe(`unknown field: ${"y".repeat(ECHOED_INPUT_MAX_CHARACTERS - 1)}${CUT_MARKER}`);
    expect(errorTextOf(decodeInput(ClientCreate, { name: "x", "\u0000": 1 }))).toBe("unknown field: \uFFFD");
  });

  it("bounds the unknown event types the area's and the CLI's fields echo (property)", () => {
    fc.assert(fc.property(fc.array(anyText, { maxLength: 4 }), (names) => {
      expect(boundedAndStorable(errorTextOf(parseEventTypes(names.join(","))))).toBe(true);
      expect(boundedAndStorable(errorTextOf(parseSubscription("some", names)))).toBe(true);
      expect(boundedAndStorable(errorTextOf(parseListenRequest({ forward_to: "http://localhost:4000/", events: names.join(",") })))).toBe(true);
    }));
    expect(errorTextOf(parseEventTypes(`${"z".repeat(1_000_000)}\u0000`))).toContain(`"${"z".repeat(ECHOED_INPUT_MAX_CHARACTERS - 1)}${CUT_MARKER}"`);
  });

  it("keeps a local listener's report with NULs and megabytes, storable and cut", () => {
    const report = Result.getOrThrow(parseListenerReport({
      delivery_id: 1, lease_token: "00000000-0000-4000-8000-000000000000", status_code: 200, duration_ms: 1,
      error: "a\u0000b", response_body: `\uD800${"x".repeat(1_000_000)}`,
    }));
    expect(report.error).toBe("a\uFFFDb");
    expect(report.responseBody).toBe(`\uFFFD${"x".repeat(ATTEMPT_TEXT_MAX_CHARACTERS - 2)}${CUT_MARKER}`);
  });
});
