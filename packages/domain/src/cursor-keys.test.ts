import { Schema } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CursorId, CursorName, CursorTimestamp } from "./cursor-keys.ts";

const accepts = (schema: Schema.Codec<unknown, unknown>, value: unknown): boolean =>
  Schema.is(schema as Schema.Top)(value);

describe("CursorTimestamp", () => {
  it.each([
    "2026-01-01T00:00:00.000Z",
    "2026-12-31T23:59:59.999Z",
    "2024-02-29T12:00:00.000Z",
    "2000-02-29T00:00:00.000Z",
    "1970-01-01T00:00:00.000Z",
  ])("accepts %s", (value) => {
    expect(accepts(CursorTimestamp, value)).toBe(true);
  });

  it("accepts every timestamp the API prints (Date#toISOString)", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1000-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true }),
        (date) => {
          expect(accepts(CursorTimestamp, date.toISOString())).toBe(true);
        },
      ),
    );
  });

  it.each([
    ["date only", "2026-01-01"],
    ["no milliseconds", "2026-01-01T00:00:00Z"],
    ["microseconds", "2026-01-01T00:00:00.000000Z"],
    ["offset instead of Z", "2026-01-01T00:00:00.000+00:00"],
    ["lower-case z", "2026-01-01T00:00:00.000z"],
    ["space separator", "2026-01-01 00:00:00.000Z"],
    ["month 13", "2026-13-01T00:00:00.000Z"],
    ["month 00", "2026-00-01T00:00:00.000Z"],
    ["day 00", "2026-01-00T00:00:00.000Z"],
    ["day 32", "2026-01-32T00:00:00.000Z"],
    ["hour 25", "2026-01-01T25:00:00.000Z"],
    ["minute 60", "2026-01-01T00:60:00.000Z"],
    ["expanded year", "+002026-01-01T00:00:00.000Z"],
    ["empty", ""],
    ["number", 1767225600000],
    ["null", null],
  ])("rejects %s", (_label, value) => {
    expect(accepts(CursorTimestamp, value)).toBe(false);
  });

  // The module promises that "a well-formed cursor must never reach the database with a value it
  // would reject". PostgreSQL rejects these days ("date/time field value out of range"), but
  // V8's Date.parse silently rolls them over into the next month.
  it.each([
    ["February 30", "2026-02-30T00:00:00.000Z"],
    ["February 31", "2026-02-31T00:00:00.000Z"],
    ["February 29 in a common year", "2026-02-29T00:00:00.000Z"],
    ["April 31", "2026-04-31T00:00:00.000Z"],
    ["November 31", "2026-11-31T00:00:00.000Z"],
  ])("rejects an impossible calendar day: %s", (_label, value) => {
    expect(accepts(CursorTimestamp, value)).toBe(false);
  });
});

describe("CursorId", () => {
  it.each([1, 2, 42, 2 ** 31, Number.MAX_SAFE_INTEGER])("accepts %s", (value) => {
    expect(accepts(CursorId, value)).toBe(true);
  });

  it.each([0, -0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, Number.POSITIVE_INFINITY, "1", null])(
    "rejects %s",
    (value) => {
      expect(accepts(CursorId, value)).toBe(false);
    },
  );

  it("accepts exactly the safe positive integers (property)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer(), fc.double(), fc.maxSafeInteger()), (value) => {
        expect(accepts(CursorId, value)).toBe(Number.isSafeInteger(value) && value >= 1);
      }),
    );
  });
});

describe("CursorName", () => {
  it("accepts any string without NUL", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }).filter((s) => !s.includes("\u0000")), (value) => {
        expect(accepts(CursorName, value)).toBe(true);
      }),
    );
  });

  it("rejects any string containing NUL", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        expect(accepts(CursorName, `${a}\u0000${b}`)).toBe(false);
      }),
    );
  });

  it.each([5, null, undefined, ["a"]])("rejects non-string %s", (value) => {
    expect(accepts(CursorName, value)).toBe(false);
  });
});
