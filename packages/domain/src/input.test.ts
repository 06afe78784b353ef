import { Result, Schema } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InvalidInput } from "./errors.ts";
import { CalendarDate, decodeInput, isCalendarDate, optionalField, optionalText, parseRecordId, requiredText } from "./input.ts";

/** The error text of a failed decode, or undefined when it succeeded. */
const errorOf = <A>(schema: Schema.Codec<A, unknown>, body: unknown): string | undefined => {
  const result = decodeInput(schema, body);
  return Result.isFailure(result) ? result.failure.message : undefined;
};

/** Reference leap-year rule, written independently of Date. */
const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number): number => [31, isLeap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] as number;
const pad = (n: number, width: number): string => String(n).padStart(width, "0");

describe("isCalendarDate", () => {
  it.each([
    ["an ordinary date", "2026-03-15"],
    ["the first day of a year", "2026-01-01"],
    ["the last day of a year", "2026-12-31"],
    ["Feb 29 in a leap year", "2024-02-29"],
    ["Feb 29 in a century leap year (divisible by 400)", "2000-02-29"],
    ["Feb 29 in 2400", "2400-02-29"],
    ["Feb 28 in a common year", "2026-02-28"],
    ["April 30", "2026-04-30"],
    ["January 31", "2026-01-31"],
    ["the earliest supported date", "1900-01-01"],
    ["a far future date", "9999-12-31"],
  ])("accepts %s (%s)", (_label, text) => {
    expect(isCalendarDate(text)).toBe(true);
  });

  it.each([
    ["Feb 29 in a common year", "2026-02-29"],
    ["Feb 29 in 2023", "2023-02-29"],
    ["Feb 29 in a century non-leap year (1900)", "1900-02-29"],
    ["Feb 29 in 2100", "2100-02-29"],
    ["Feb 30", "2026-02-30"],
    ["Feb 30 in a leap year", "2024-02-30"],
    ["April 31", "2026-04-31"],
    ["June 31", "2026-06-31"],
    ["September 31", "2026-09-31"],
    ["November 31", "2026-11-31"],
    ["January 32", "2026-01-32"],
    ["month 13", "2026-13-01"],
    ["month 00", "2026-00-10"],
    ["day 00", "2026-01-00"],
    ["before 1900", "1899-12-31"],
    ["year 0000", "0000-01-01"],
    ["year 0099 (Date.UTC two-digit-year trap)", "0099-01-01"],
    ["single-digit month", "2026-1-01"],
    ["single-digit day", "2026-01-1"],
    ["two-digit year", "26-01-01"],
    ["five-digit year", "20260-01-01"],
    ["slashes", "2026/01/01"],
    ["compact form", "20260101"],
    ["day-month-year order", "01-01-2026"],
    ["with a time", "2026-01-01T00:00:00Z"],
    ["with a trailing newline", "2026-01-01\n"],
    ["with a leading space", " 2026-01-01"],
    ["with a trailing space", "2026-01-01 "],
    ["full-width digits", "２０２６-０１-０１"],
    ["Arabic-Indic digits", "٢٠٢٦-٠١-٠١"],
    ["a word", "tomorrow"],
    ["empty", ""],
  ])("rejects %s (%j)", (_label, text) => {
    expect(isCalendarDate(text)).toBe(false);
  });

  it("agrees with an independent calendar for every year/month/day combination (property)", () => {
    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 99 }), (y, m, d) => {
        const expected = y >= 1900 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);
        outcomes[expected ? "accepted" : "refused"]++;
        expect(isCalendarDate(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
    expect(outcomes.accepted).toBeGreaterThan(20);
    expect(outcomes.refused).toBeGreaterThan(20);
  });

  it("accepts every day of a leap and a common year, and exactly those", () => {
    for (const year of [2024, 2026, 2000, 1900]) {
      let accepted = 0;
      for (let m = 1; m <= 12; m++) {
        for (let d = 1; d <= 31; d++) if (isCalendarDate(`${year}-${pad(m, 2)}-${pad(d, 2)}`)) accepted++;
      }
      expect(accepted).toBe(isLeap(year) ? 366 : 365);
    }
  });

  it("accepts what Date#toISOString prints for dates from 1900 on (property)", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1900-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (date) => {
          expect(isCalendarDate(date.toISOString().slice(0, 10))).toBe(true);
        },
      ),
    );
  });
});

describe("parseRecordId", () => {
  it.each<[string, number | undefined]>([
    ["1", 1],
    ["42", 42],
    ["1000000", 1000000],
    ["9007199254740991", Number.MAX_SAFE_INTEGER],
    ["0", undefined],
    ["-1", undefined],
    ["-0", undefined],
    ["abc", undefined],
    ["1.5", undefined],
    ["1.0", undefined],
    ["01", undefined],
    ["001", undefined],
    ["+1", undefined],
    ["1e3", undefined],
    ["0x10", undefined],
    [" 1", undefined],
    ["1 ", undefined],
    ["1\n", undefined],
    ["", undefined],
    ["١", undefined],
    ["9007199254740992", undefined],
    ["9999999999999999", undefined],
    ["99999999999999999999", undefined],
    ["Infinity", undefined],
    ["NaN", undefined],
  ])("%j -> %s", (text, expected) => {
    expect(parseRecordId(text)).toBe(expected);
  });

  it("parses every positive safe integer written canonically (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => {
        expect(parseRecordId(String(n))).toBe(n);
      }),
    );
  });

  it("only returns ids whose canonical spelling is the input (property)", () => {
    // Reference: the input is a positive safe integer written canonically (no sign, no leading zero).
    const canonicalId = (text: string): number | undefined =>
      /^[1-9][0-9]*$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
    const textArb = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom(..."0123456789-+. e".split("")) }),
      fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }).map(String),
      // Around the end of the safe range, where a 16-digit spelling may or may not be an id.
      fc.bigInt({ min: 2n ** 53n - 1000n, max: 2n ** 53n + 1000n }).map(String),
    );
    const outcomes = { parsed: 0, refused: 0 };
    fc.assert(
      fc.property(textArb, (text) => {
        const id = parseRecordId(text);
        const expected = canonicalId(text);
        outcomes[expected === undefined ? "refused" : "parsed"]++;
        // When an id comes back, String(id) is the input and the id is a positive safe integer.
        expect(id).toBe(expected);
      }),
      { numRuns: 1000 },
    );
    expect(outcomes.parsed).toBeGreaterThan(100);
    expect(outcomes.refused).toBeGreaterThan(100);
  });

  it("rejects numbers beyond the safe range (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: BigInt(Number.MAX_SAFE_INTEGER) + 1n, max: 10n ** 30n }), (n) => {
        expect(parseRecordId(n.toString())).toBeUndefined();
      }),
    );
  });
});

describe("decodeInput", () => {
  const Sample = Schema.Struct({
    title: requiredText("title", 10),
    note: optionalText("note", 5),
    count: optionalField(Schema.Int, "count must be an integer"),
    day: optionalField(CalendarDate("day"), "day must be a calendar date written YYYY-MM-DD"),
  });

  it("returns the decoded value on success", () => {
    const result = decodeInput(Sample, { title: "Hello", note: "hi", count: 3, day: "2024-02-29" });
    expect(Result.getOrThrow(result)).toEqual({ title: "Hello", note: "hi", count: 3, day: "2024-02-29" });
  });

  it("fails with InvalidInput", () => {
    const result = decodeInput(Sample, {});
    const failure = Result.getOrThrow(Result.flip(result));
    expect(failure).toBeInstanceOf(InvalidInput);
    expect(failure._tag).toBe("InvalidInput");
    expect(failure.message).toBe("title is required");
  });

  it.each<[string, unknown, string]>([
    ["missing required field", {}, "title is required"],
    ["empty required text", { title: "" }, "title must not be empty"],
    ["blank required text", { title: " \t\n " }, "title must not be empty"],
    ["non-breaking-space-only required text", { title: "\u00a0" }, "title must not be empty"],
    ["number for text", { title: 1 }, "title must be a string"],
    ["null for required text", { title: null }, "title must be a string"],
    ["too long required text", { title: "x".repeat(11) }, "title must be at most 10 characters"],
    ["NUL in required text", { title: "a\u0000b" }, "title must not contain NUL characters"],
    ["too long optional text", { title: "ok", note: "123456" }, "note must be at most 5 characters"],
    ["NUL in optional text", { title: "ok", note: "\u0000" }, "note must not contain NUL characters"],
    ["number for optional text", { title: "ok", note: 5 }, "note must be a string"],
    ["bad calendar date", { title: "ok", day: "2026-02-30" }, "day must be a calendar date written YYYY-MM-DD"],
    ["unknown field", { title: "ok", colour: "red" }, "unknown field: colour"],
    ["unknown field before a missing one", { colour: "red" }, "unknown field: colour"],
    ["array body", [], "request body must be a JSON object"],
    ["null body", null, "request body must be a JSON object"],
    ["string body", "x", "request body must be a JSON object"],
    ["number body", 5, "request body must be a JSON object"],
    ["boolean body", true, "request body must be a JSON object"],
  ])("%s -> %j", (_label, body, message) => {
    expect(errorOf(Sample, body)).toBe(message);
  });

  it("accepts boundary lengths", () => {
    expect(errorOf(Sample, { title: "x".repeat(10), note: "y".repeat(5) })).toBeUndefined();
  });

  it("accepts null and absence for optional fields", () => {
    expect(errorOf(Sample, { title: "ok", note: null, count: null, day: null })).toBeUndefined();
    expect(errorOf(Sample, { title: "ok" })).toBeUndefined();
  });

  it("refuses unknown fields from JSON.parse, including prototype-looking names", () => {
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"]) {
      expect(errorOf(Sample, JSON.parse(`{"title":"ok","${name}":1}`))).toBe(`unknown field: ${name}`);
    }
  });

  it("reports any unknown field by name (property)", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/).filter((k) => !["title", "note", "count", "day"].includes(k)),
        fc.jsonValue(),
        (field, value) => {
          expect(errorOf(Sample, { title: "ok", [field]: value })).toBe(`unknown field: ${field}`);
        },
      ),
    );
  });

  it("turns every non-object JSON body into the same message (property)", () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((v) => v === null || typeof v !== "object" || Array.isArray(v)),
        (body) => {
          expect(errorOf(Sample, body)).toBe("request body must be a JSON object");
        },
      ),
    );
  });

  it("never throws on arbitrary JSON: accepts or refuses with a message (property)", () => {
    // Reference for Sample, written independently of the schema: the reasons a body must be refused.
    const text = (v: unknown, max: number): boolean =>
      typeof v === "string" && [...v].length <= max && !v.includes("\u0000") && v.isWellFormed();
    const optional = (v: unknown, valid: (v: unknown) => boolean): boolean => v === undefined || v === null || valid(v);
    const FIELDS = ["title", "note", "count", "day"];
    const refusalReasons = (body: unknown): string[] => {
      if (typeof body !== "object" || body === null || Array.isArray(body)) return ["request body must be a JSON object"];
      const fields = body as Record<string, unknown>;
      return [
        ...Object.keys(fields).filter((key) => !FIELDS.includes(key)).map((key) => `unknown field: ${key}`),
        ...(text(fields["title"], 10) && (fields["title"] as string).trim().length > 0 ? [] : ["title"]),
        ...(optional(fields["note"], (v) => text(v, 5)) ? [] : ["note"]),
        ...(optional(fields["count"], Number.isSafeInteger) ? [] : ["count"]),
        ...(optional(fields["day"], (v) => typeof v === "string" && isCalendarDate(v)) ? [] : ["day"]),
      ];
    };
    /** The part of a refusal message that names its reason: the whole of a body-level message, else the field. */
    const reasonOf = (message: string): string =>
      message.startsWith("unknown field: ") || message === "request body must be a JSON object" ? message : message.split(" ")[0]!;

    const outcomes = { accepted: 0, refused: 0 };
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ title: fc.string({ minLength: 1 }) }, { requiredKeys: [] })), (body) => {
        const reasons = refusalReasons(body);
        outcomes[reasons.length === 0 ? "accepted" : "refused"]++;
        const outcome = Result.match(decodeInput(Sample, body), {
          onSuccess: (value) => ({ accepted: value }),
          onFailure: (failure) => ({ refused: reasonOf(failure.message), message: failure.message }),
        });
        expect(outcome).toEqual(
          reasons.length === 0
            ? { accepted: body }
            : { refused: expect.toBeOneOf(reasons), message: expect.stringMatching(/\S/) },
        );
      }),
      { numRuns: 500 },
    );
    expect(outcomes.accepted).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });
});

describe("requiredText", () => {
  const Title = Schema.Struct({ title: requiredText("title", 200) });

  it("accepts any text with a non-blank character, no NUL, up to the maximum (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 }).filter(
          (s) => s.trim().length > 0 && !s.includes("\u0000") && s.length <= 200,
        ),
        (title) => {
          expect(errorOf(Title, { title })).toBeUndefined();
        },
      ),
    );
  });

  it("rejects any text containing NUL (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50 }), (a, b) => {
        expect(errorOf(Title, { title: `x${a}\u0000${b}` })).toBe("title must not contain NUL characters");
      }),
    );
  });

  it("rejects any whitespace-only text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(" ", "\t", "\n", "\r", "\u00a0", "\u2003", "\ufeff") }), (title) => {
        expect(errorOf(Title, { title })).toBe("title must not be empty");
      }),
    );
  });
});
