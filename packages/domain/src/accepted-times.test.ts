import fc from "fast-check";
import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { ACCEPTED_YEARS, nextDayStart, readUtcDay, readUtcTime } from "./accepted-times.ts";
import { parseAuditLogFilter } from "./audit-log.ts";
import { parseRequestLogFilter } from "./request-log.ts";
import { parseDeliveryLogFilter } from "./webhooks/delivery-log.ts";

/** The one range of times and days input may name, and every filter reading it. */

/** What PostgreSQL's timestamptz input reads: a four-digit year from 0001 (no `+010000-…`, no year 0). */
const storable = (iso: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(iso) && iso >= "0001";

const failureOf = <A>(result: Result.Result<A, { readonly message: string }>) => (Result.isFailure(result) ? result.failure.message : undefined);

describe("readUtcTime and readUtcDay", () => {
  it.each([
    ["the first accepted time", "1900-01-01T00:00", "1900-01-01T00:00:00.000Z"],
    ["the last accepted time", "9998-12-31T23:59:59.999Z", "9998-12-31T23:59:59.999Z"],
  ])("read %s", (_case, text, iso) => {
    expect(Result.getOrThrow(readUtcTime(text, "from"))).toBe(iso);
  });

  it.each([
    ["year 0000", "0000-01-01T00:00", "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["the year before the first", "1899-12-31T23:59", "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["year 9999", "9999-01-01T00:00", "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["a six-digit year", "+010000-01-01T00:00", "from must be a time written YYYY-MM-DDTHH:MM (UTC)"],
    ["a day that does not exist", "2026-02-30T00:00", "from must be a time written YYYY-MM-DDTHH:MM (UTC)"],
  ])("refuse %s as a time, naming the field", (_case, text, message) => {
    expect(failureOf(readUtcTime(text, "from"))).toBe(message);
  });

  it.each([
    ["year 0000", "0000-01-01", "to must be a date between 1900-01-01 and 9998-12-31"],
    ["year 9999's last day", "9999-12-31", "to must be a date between 1900-01-01 and 9998-12-31"],
    ["1899", "1899-12-31", "to must be a date between 1900-01-01 and 9998-12-31"],
    ["not a day", "9998-13-01", "to must be a date written YYYY-MM-DD"],
  ])("refuse %s as a day, naming the field", (_case, text, message) => {
    expect(failureOf(readUtcDay(text, "to"))).toBe(message);
  });

  it("accept every time and day of the accepted years, and the next day of each is storable too (property)", () => {
    const accepted = fc.date({
      min: new Date(`${ACCEPTED_YEARS.first}-01-01T00:00:00.000Z`), max: new Date(`${ACCEPTED_YEARS.last}-12-31T23:59:59.999Z`), noInvalidDate: true,
    });
    fc.assert(fc.property(accepted, (date) => {
      const iso = date.toISOString();
      expect(Result.getOrThrow(readUtcTime(iso, "from"))).toBe(iso);
      const day = Result.getOrThrow(readUtcDay(iso.slice(0, 10), "to"));
      expect(storable(day) && storable(nextDayStart(day))).toBe(true);
    }));
  });

  it("refuse every four-digit year outside the accepted ones (property)", () => {
    const outside = fc.oneof(fc.integer({ min: 0, max: ACCEPTED_YEARS.first - 1 }), fc.integer({ min: ACCEPTED_YEARS.last + 1, max: 9999 }));
    fc.assert(fc.property(outside, (year) => {
      const day = `${String(year).padStart(4, "0")}-06-15`;
      expect(Result.isFailure(readUtcDay(day, "from"))).toBe(true);
      expect(Result.isFailure(readUtcTime(`${day}T12:00`, "from"))).toBe(true);
    }));
  });
});

describe("the Developer area's filters", () => {
  it.each([
    ["the delivery log's from", () => parseDeliveryLogFilter({ from: "0000-01-01T00:00" }), "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["the delivery log's to", () => parseDeliveryLogFilter({ to: "9999-12-31T23:59" }), "to must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["the request log's from", () => parseRequestLogFilter({ from: "0000-01-01T00:00" }), "from must be a time between 1900-01-01 and 9998-12-31 (UTC)"],
    ["the audit log's from", () => parseAuditLogFilter({ from: "0000-01-01" }), "from must be a date between 1900-01-01 and 9998-12-31"],
    ["the audit log's to", () => parseAuditLogFilter({ to: "9999-12-31" }), "to must be a date between 1900-01-01 and 9998-12-31"],
  ])("refuse %s out of the accepted years", (_case, parse, message) => {
    expect(failureOf(parse())).toBe(message);
  });

  it("read the audit log's last accepted day up to the next day's start", () => {
    expect(Result.getOrThrow(parseAuditLogFilter({ to: "9998-12-31" }))).toEqual({ to: "9999-01-01T00:00:00.000Z" });
  });
});
