import { Result, Schema } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../cursor.ts";
import { decodeInput, isCalendarDate } from "../input.ts";
import { Event, EVENT_TYPES, EventCreate, eventListing, MAX_GUESTS, MAX_PRICE_PER_HEAD } from "./event.ts";

const errorOf = (body: unknown): string | undefined => {
  const result = decodeInput(EventCreate, body);
  return Result.isFailure(result) ? result.failure.message : undefined;
};

const decoded = (body: unknown): EventCreate => Result.getOrThrow(decodeInput(EventCreate, body));

const pad = (n: number, width: number): string => String(n).padStart(width, "0");

describe("EventCreate via decodeInput: name", () => {
  it.each<[string, unknown, string]>([
    ["missing", {}, "name is required"],
    ["missing with other valid fields", { guests: 10 }, "name is required"],
    ["empty", { name: "" }, "name must not be empty"],
    ["blank", { name: "  " }, "name must not be empty"],
    ["tabs and newlines", { name: "\t\n" }, "name must not be empty"],
    ["number", { name: 1 }, "name must be a string"],
    ["boolean", { name: true }, "name must be a string"],
    ["null", { name: null }, "name must be a string"],
    ["array", { name: ["Gala"] }, "name must be a string"],
    ["object", { name: { en: "Gala" } }, "name must be a string"],
    ["too long", { name: "x".repeat(201) }, "name must be at most 200 characters"],
  ])("%s -> %j", (_label, body, message) => {
    expect(errorOf(body)).toBe(message);
  });

  it.each([
    ["NUL alone", "\u0000"],
    ["NUL inside", "Gala\u0000Dinner"],
    ["NUL at the end", "Gala\u0000"],
  ])("rejects a name containing %s", (_label, name) => {
    const message = errorOf({ name });
    expect(message).toBeDefined();
    expect(message).toContain("name");
  });

  it.each([
    ["one character", "G"],
    ["200 characters", "x".repeat(200)],
    ["surrounding whitespace", "  Gala  "],
    ["unicode", "Hochzeit Müller 💍"],
  ])("accepts a name with %s, unchanged", (_label, name) => {
    expect(decoded({ name })).toEqual({ name });
  });
});

describe("EventCreate via decodeInput: guests", () => {
  it.each<[string, unknown, string]>([
    ["fractional", 1.5, "guests must be an integer"],
    ["numeric string", "3", "guests must be an integer"],
    ["boolean", true, "guests must be an integer"],
    ["array", [3], "guests must be an integer"],
  ])("rejects %s guests (%j) with exactly the integer message", (_label, guests, message) => {
    expect(errorOf({ name: "Gala", guests })).toBe(message);
  });

  it.each([
    ["negative", -1],
    ["zero", 0],
    ["above the maximum", MAX_GUESTS + 1],
    ["far above the maximum", 1e9],
  ])("rejects %s guests with a message mentioning the range", (_label, guests) => {
    const message = errorOf({ name: "Gala", guests });
    expect(message).toBeDefined();
    expect(message).toContain("guests");
    expect(message).toMatch(/between/);
    expect(message).toBe(`guests must be between 1 and ${MAX_GUESTS}`);
  });

  it.each([1, 2, 150, MAX_GUESTS])("accepts %i guests", (guests) => {
    expect(decoded({ name: "Gala", guests })).toEqual({ name: "Gala", guests });
  });

  it("rejects every non-integer number of guests with the integer message (property)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
        (guests) => {
          expect(errorOf({ name: "Gala", guests })).toBe("guests must be an integer");
        },
      ),
    );
  });

  it("accepts exactly the integers from 1 to MAX_GUESTS (property)", () => {
    // A wide range alone holds few accepted values; the range itself and its edges are drawn on purpose.
    const guestsArb = fc.oneof(
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.integer({ min: 1, max: MAX_GUESTS }),
      fc.constantFrom(-1, 0, 1, MAX_GUESTS, MAX_GUESTS + 1),
    );
    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(guestsArb, (guests) => {
        const ok = guests >= 1 && guests <= MAX_GUESTS;
        outcomes[ok ? "accepted" : "refused"]++;
        expect(errorOf({ name: "Gala", guests })).toBe(ok ? undefined : `guests must be between 1 and ${MAX_GUESTS}`);
      }),
      { numRuns: 300 },
    );
    expect(outcomes.accepted).toBeGreaterThan(30);
    expect(outcomes.refused).toBeGreaterThan(30);
  });
});

describe("EventCreate via decodeInput: price_per_head", () => {
  it.each<[string, unknown, string]>([
    ["negative", -1, "price_per_head must not be negative"],
    ["slightly negative", -0.01, "price_per_head must not be negative"],
    ["numeric string", "12.50", "price_per_head must be a number"],
    ["boolean", false, "price_per_head must be a number"],
  ])("rejects %s price with %j", (_label, price, message) => {
    expect(errorOf({ name: "Gala", price_per_head: price })).toBe(message);
  });

  it.each([0, 0.01, 12.5, 99.99, 1e6])("accepts %d", (price) => {
    expect(decoded({ name: "Gala", price_per_head: price })).toEqual({ name: "Gala", price_per_head: price });
  });
});

describe("EventCreate via decodeInput: event_date", () => {
  it.each([
    ["Feb 30", "2026-02-30"],
    ["month 13", "2026-13-01"],
    ["a word", "tomorrow"],
    ["Feb 29 in a common year", "2026-02-29"],
    ["US order", "02/14/2026"],
    ["with a time", "2026-02-14T18:00:00Z"],
    ["empty", ""],
    ["before 1900", "1899-12-31"],
    ["a number", 20260214],
  ])("rejects %s with a message mentioning event_date", (_label, eventDate) => {
    const message = errorOf({ name: "Gala", event_date: eventDate });
    expect(message).toBeDefined();
    expect(message).toContain("event_date");
  });

  it.each(["2026-02-14", "2024-02-29", "2000-02-29", "1900-01-01"])("accepts %s", (eventDate) => {
    expect(decoded({ name: "Gala", event_date: eventDate })).toEqual({ name: "Gala", event_date: eventDate });
  });

  it("accepts any real date from 1900 on (property)", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true }),
        (date) => {
          const eventDate = date.toISOString().slice(0, 10);
          expect(errorOf({ name: "Gala", event_date: eventDate })).toBeUndefined();
        },
      ),
    );
  });
});

describe("EventCreate via decodeInput: event_type", () => {
  it.each(["picnic", "Wedding", "WEDDING", "", "private party", 1])("rejects %j with a message mentioning event_type", (eventType) => {
    const message = errorOf({ name: "Gala", event_type: eventType });
    expect(message).toBeDefined();
    expect(message).toContain("event_type");
  });

  it.each(EVENT_TYPES)("accepts %s", (eventType) => {
    expect(decoded({ name: "Gala", event_type: eventType })).toEqual({ name: "Gala", event_type: eventType });
  });
});

describe("EventCreate via decodeInput: body shape", () => {
  it.each<[string, unknown]>([
    ["an array", []],
    ["an array holding an object", [{ name: "Gala" }]],
    ["null", null],
    ["a string", "x"],
    ["a number", 5],
    ["a boolean", false],
  ])("rejects %s with 'request body must be a JSON object'", (_label, body) => {
    expect(errorOf(body)).toBe("request body must be a JSON object");
  });

  it.each([
    ["colour", { name: "Gala", colour: "red" }],
    ["status", { name: "Gala", status: "confirmed" }],
    ["id", { name: "Gala", id: 5 }],
    ["currency", { name: "Gala", currency: "EUR" }],
    ["Name", { name: "Gala", Name: "Gala" }],
  ])("rejects unknown field %s", (field, body) => {
    expect(errorOf(body)).toBe(`unknown field: ${field}`);
  });

  it("rejects an unknown field with exactly 'unknown field: colour'", () => {
    expect(errorOf({ name: "Gala", colour: "red" })).toBe("unknown field: colour");
  });

  it("accepts null for every optional field", () => {
    const body = { name: "Gala", event_date: null, guests: null, price_per_head: null, event_type: null };
    expect(decoded(body)).toEqual(body);
  });

  it("accepts a minimal body and leaves absent fields absent", () => {
    const value = decoded({ name: "Gala" });
    expect(value).toEqual({ name: "Gala" });
    expect(Object.keys(value)).toEqual(["name"]);
  });

  it("accepts a full body", () => {
    const body = { name: "Gala", event_date: "2026-06-20", guests: 120, price_per_head: 45.5, event_type: "wedding" };
    expect(decoded(body)).toEqual(body);
  });

  it("accepts bodies that went through JSON.parse", () => {
    expect(decoded(JSON.parse('{"name":"Gala","guests":null,"event_type":"festival"}'))).toEqual({
      name: "Gala",
      guests: null,
      event_type: "festival",
    });
  });
});

describe("EventCreate via decodeInput: properties", () => {
  const nameArb = fc
    .string({ unit: "grapheme", minLength: 1, maxLength: 80 })
    .filter((s) => s.trim().length > 0 && !s.includes("\u0000") && s.length <= 200);
  const dateArb = fc
    .tuple(fc.integer({ min: 1900, max: 2200 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
    .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
  const validBodyArb = fc.record(
    {
      name: nameArb,
      event_date: fc.option(dateArb, { nil: null }),
      guests: fc.option(fc.integer({ min: 1, max: MAX_GUESTS }), { nil: null }),
      price_per_head: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true }), { nil: null }),
      event_type: fc.option(fc.constantFrom(...EVENT_TYPES), { nil: null }),
    },
    { requiredKeys: ["name"] },
  );

  it("decodes every valid body to itself (property)", () => {
    fc.assert(
      fc.property(validBodyArb, (body) => {
        expect(decoded(body)).toEqual(body);
      }),
      { numRuns: 500 },
    );
  });

  it("survives a JSON round trip (property)", () => {
    fc.assert(
      fc.property(validBodyArb, (body) => {
        const parsed: unknown = JSON.parse(JSON.stringify(body));
        expect(Result.isSuccess(decodeInput(EventCreate, parsed))).toBe(true);
      }),
    );
  });

  it("decoded values always satisfy the Event field constraints; refusals always say why (property)", () => {
    // Each field is a valid value or any JSON at all, so both outcomes come up often; both are checked,
    // against an independent account of which fields are valid, on every case.
    const anyOr = <T>(valid: fc.Arbitrary<T>) => fc.oneof(valid, fc.jsonValue());
    const bodyArb = fc.record(
      {
        name: anyOr(nameArb),
        event_date: anyOr(dateArb),
        guests: anyOr(fc.integer({ min: 1, max: MAX_GUESTS })),
        price_per_head: anyOr(fc.double({ min: 0, max: 1e6, noNaN: true, noDefaultInfinity: true })),
        event_type: anyOr(fc.constantFrom(...EVENT_TYPES)),
      },
      { requiredKeys: [] },
    );
    const isName = (v: unknown) =>
      typeof v === "string" && v.trim().length > 0 && [...v].length <= 200 && !v.includes("\u0000") && v.isWellFormed();
    const optional = (valid: (v: unknown) => boolean) => (body: Record<string, unknown>, field: string) =>
      !Object.hasOwn(body, field) || body[field] === null || valid(body[field]);
    const FIELD_IS_VALID: Record<string, (body: Record<string, unknown>, field: string) => boolean> = {
      name: (body) => isName(body["name"]),
      event_date: optional((v) => typeof v === "string" && isCalendarDate(v)),
      guests: optional((v) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= MAX_GUESTS),
      price_per_head: optional((v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= MAX_PRICE_PER_HEAD),
      event_type: optional((v) => (EVENT_TYPES as ReadonlyArray<unknown>).includes(v)),
    };
    const invalidFields = (body: Record<string, unknown>) =>
      Object.entries(FIELD_IS_VALID).filter(([field, valid]) => !valid(body, field)).map(([field]) => field);

    const outcomes = { accepted: 0, refused: 0 };
    const reasons = new Set<string>();
    fc.assert(
      fc.property(bodyArb, (body) => {
        const invalid = invalidFields(body);
        const outcome = Result.match(decodeInput(EventCreate, body), {
          onSuccess: (value) => ({ accepted: value }),
          onFailure: (failure) => ({ refused: failure.message.split(" ")[0], message: failure.message }),
        });
        // A valid body decodes to itself (so every field constraint holds); an invalid one is refused
        // with a message that starts with one of its invalid fields.
        expect(outcome).toEqual(
          invalid.length === 0
            ? { accepted: body }
            : { refused: expect.toBeOneOf(invalid), message: expect.stringMatching(/^\S+ \S/) },
        );
        outcomes[invalid.length === 0 ? "accepted" : "refused"]++;
        reasons.add("refused" in outcome ? `refused for ${outcome.refused}` : "accepted");
      }),
      { numRuns: 500 },
    );
    expect(outcomes.accepted).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
    // Each field's check was the reason for some refusal.
    expect([...reasons].sort()).toEqual(["accepted", ...Object.keys(FIELD_IS_VALID).map((field) => `refused for ${field}`)].sort());
  });
});

describe("eventListing", () => {
  const event: Event = {
    id: 7,
    name: "Gala",
    event_date: null,
    guests: null,
    price_per_head: null,
    currency: "EUR",
    event_type: null,
    status: "inquiry",
    client_id: null,
    created_at: "2026-01-02T03:04:05.678Z",
  };

  it("is the events endpoint, newest first, keyed by created_at then id", () => {
    expect(eventListing.endpoint).toBe("events");
    expect(eventListing.direction).toBe("desc");
    expect(eventListing.keyOf(event)).toEqual(["2026-01-02T03:04:05.678Z", 7]);
  });

  it("round-trips its key through a cursor", () => {
    const cursor = encodeCursor(eventListing.endpoint, eventListing.keyOf(event));
    expect(Result.getOrThrow(decodeCursor("events", cursor, eventListing.cursorKey))).toEqual(["2026-01-02T03:04:05.678Z", 7]);
  });

  it("describes valid events with the Event schema", () => {
    expect(Schema.is(Event)(event)).toBe(true);
    expect(Schema.is(Event)({ ...event, status: "archived" })).toBe(false);
  });
});
