import { Result } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { InvalidCursor } from "./errors.ts";
import {
  assemblePage,
  DEFAULT_LIMIT,
  type Listing,
  MAX_LIMIT,
  parseLimit,
  parsePageRequest,
  type SortKey,
} from "./pagination.ts";
import { type Client, clientListing } from "./resources/client.ts";
import { type Event, eventListing } from "./resources/event.ts";

describe("parseLimit", () => {
  it("has the documented defaults", () => {
    expect(DEFAULT_LIMIT).toBe(100);
    expect(MAX_LIMIT).toBe(500);
  });

  it.each<[string, string | ReadonlyArray<string> | undefined, number]>([
    ["absent", undefined, 100],
    ["zero", "0", 100],
    ["negative zero", "-0", 100],
    ["negative", "-1", 100],
    ["very negative", "-99999999999999999999", 100],
    ["not a number", "abc", 100],
    ["empty", "", 100],
    ["decimal", "1.5", 100],
    ["decimal whole", "10.0", 100],
    ["exponent", "1e2", 100],
    ["hex", "0x10", 100],
    ["leading plus", "+5", 100],
    ["leading space", " 5", 100],
    ["trailing space", "5 ", 100],
    ["Infinity", "Infinity", 100],
    ["NaN", "NaN", 100],
    ["one over the cap", "501", 500],
    ["at the cap", "500", 500],
    ["one", "1", 1],
    ["typical", "25", 25],
    ["just under the cap", "499", 499],
    ["leading zeros", "007", 7],
    ["huge", "99999999999999999999", 500],
    ["enormous", "9".repeat(400), 500],
    ["array uses the first value", ["7", "9"], 7],
    ["array with an invalid first value", ["abc", "9"], 100],
    ["array with a too large first value", ["1000", "9"], 500],
    ["empty array", [], 100],
  ])("%s: %j -> %i", (_label, raw, expected) => {
    expect(parseLimit(raw)).toBe(expected);
  });

  it("always returns an integer between 1 and 500 (property)", () => {
    const raw = fc.oneof(
      fc.constant(undefined),
      fc.string(),
      fc.string({ unit: "binary" }),
      fc.integer().map(String),
      fc.bigInt().map(String),
      fc.double().map(String),
      fc.array(fc.oneof(fc.string(), fc.integer().map(String))),
    );
    fc.assert(
      fc.property(raw, (value) => {
        const limit = parseLimit(value);
        expect(Number.isInteger(limit)).toBe(true);
        expect(limit).toBeGreaterThanOrEqual(1);
        expect(limit).toBeLessThanOrEqual(500);
      }),
      { numRuns: 1000 },
    );
  });

  it("returns any whole number between 1 and 500 unchanged (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), (n) => {
        expect(parseLimit(String(n))).toBe(n);
      }),
    );
  });

  it("caps any whole number above 500 at 500 (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 501n, max: 10n ** 40n }), (n) => {
        expect(parseLimit(n.toString())).toBe(500);
      }),
    );
  });

  it("falls back to 100 for any whole number at or below zero (property)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 0n }), (n) => {
        expect(parseLimit(n.toString())).toBe(100);
      }),
    );
  });

  it("only looks at the first value of a repeated parameter (property)", () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string()), (first, rest) => {
        expect(parseLimit([first, ...rest])).toBe(parseLimit(first));
      }),
    );
  });
});

// --- fixtures ----------------------------------------------------------------------------------

const makeEvent = (id: number, createdAt: string): Event => ({
  id,
  name: `Event ${id}`,
  event_date: null,
  guests: null,
  price_per_head: null,
  currency: "EUR",
  event_type: null,
  status: "inquiry",
  client_id: null,
  created_at: createdAt,
});

const makeClient = (id: number, name: string): Client => ({
  id,
  name,
  email: null,
  phone: null,
  company: null,
  created_at: "2026-01-01T00:00:00.000Z",
});

/** Events newest first, as the repository returns them. */
const eventRowsArb = (minLength: number, maxLength: number): fc.Arbitrary<Event[]> =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: 1_000_000 }), { minLength, maxLength })
    .chain((ids) =>
      fc.tuple(
        fc.constant(ids),
        fc.array(
          fc.date({ min: new Date("2020-01-01T00:00:00.000Z"), max: new Date("2030-01-01T00:00:00.000Z"), noInvalidDate: true }),
          { minLength: ids.length, maxLength: ids.length },
        ),
      ),
    )
    .map(([ids, dates]) => ids.map((id, i) => makeEvent(id, (dates[i] as Date).toISOString())));

const decodeKey = <Row, Key extends SortKey>(listing: Listing<Row, Key>, cursor: string) =>
  decodeCursor(listing.endpoint, cursor, listing.cursorKey);

describe("parsePageRequest", () => {
  it("without a cursor: default limit, no key", () => {
    const result = parsePageRequest(eventListing, {});
    expect(Result.getOrThrow(result)).toEqual({ limit: 100, after: undefined });
  });

  it("without a cursor: uses the parsed limit", () => {
    const result = parsePageRequest(eventListing, { limit: "25" });
    expect(Result.getOrThrow(result)).toEqual({ limit: 25, after: undefined });
  });

  it("caps the limit even without a cursor", () => {
    expect(Result.getOrThrow(parsePageRequest(eventListing, { limit: "100000" }))).toEqual({ limit: 500, after: undefined });
  });

  it("with a valid cursor: decodes its key", () => {
    const key = ["2026-01-01T12:00:00.000Z", 17] as const;
    const cursor = encodeCursor("events", key);
    const result = parsePageRequest(eventListing, { limit: "10", cursor });
    expect(Result.getOrThrow(result)).toEqual({ limit: 10, after: key });
  });

  it("with a repeated cursor parameter: uses the first value", () => {
    const first = encodeCursor("events", ["2026-01-01T12:00:00.000Z", 1]);
    const second = encodeCursor("events", ["2026-01-02T12:00:00.000Z", 2]);
    expect(Result.getOrThrow(parsePageRequest(eventListing, { cursor: [first, second] }))).toEqual({
      limit: 100,
      after: ["2026-01-01T12:00:00.000Z", 1],
    });
    expect(Result.isFailure(parsePageRequest(eventListing, { cursor: ["junk", first] }))).toBe(true);
  });

  it("with an empty cursor array: behaves as without a cursor", () => {
    expect(Result.getOrThrow(parsePageRequest(eventListing, { cursor: [] }))).toEqual({ limit: 100, after: undefined });
  });

  it.each([
    ["garbage", "not-a-cursor"],
    ["empty string", ""],
    ["a cursor of another endpoint", encodeCursor("clients", ["Anna", 1])],
    ["a cursor with a wrong key shape", encodeCursor("events", [1, "2026-01-01T12:00:00.000Z"])],
  ])("fails with InvalidCursor for %s", (_label, cursor) => {
    const result = parsePageRequest(eventListing, { limit: "10", cursor });
    expect(Result.getOrThrow(Result.flip(result))).toBeInstanceOf(InvalidCursor);
  });

  it("round-trips any valid key and limit (property)", () => {
    fc.assert(
      fc.property(
        fc.string().filter((s) => !s.includes("\u0000")),
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: 500 }),
        (name, id, limit) => {
          const cursor = encodeCursor(clientListing.endpoint, [name, id]);
          const result = parsePageRequest(clientListing, { limit: String(limit), cursor });
          expect(Result.getOrThrow(result)).toEqual({ limit, after: [name, id] });
        },
      ),
    );
  });
});

describe("assemblePage", () => {
  it("with limit + 1 rows: has_more, drops the extra row and points the cursor at the last returned row", () => {
    const rows = [
      makeEvent(5, "2026-01-05T00:00:00.000Z"),
      makeEvent(4, "2026-01-04T00:00:00.000Z"),
      makeEvent(3, "2026-01-03T00:00:00.000Z"),
    ];
    const page = assemblePage(eventListing, rows, 2);
    expect(page.has_more).toBe(true);
    expect(page.data).toEqual(rows.slice(0, 2));
    expect(page.next_cursor).not.toBeNull();
    const key = decodeKey(eventListing, page.next_cursor as string);
    expect(Result.getOrThrow(key)).toEqual(["2026-01-04T00:00:00.000Z", 4]);
  });

  it("with exactly limit rows: no more, no cursor", () => {
    const rows = [makeEvent(2, "2026-01-02T00:00:00.000Z"), makeEvent(1, "2026-01-01T00:00:00.000Z")];
    expect(assemblePage(eventListing, rows, 2)).toEqual({ data: rows, has_more: false, next_cursor: null });
  });

  it("with fewer rows than the limit: no more, no cursor", () => {
    const rows = [makeEvent(1, "2026-01-01T00:00:00.000Z")];
    expect(assemblePage(eventListing, rows, 100)).toEqual({ data: rows, has_more: false, next_cursor: null });
  });

  it("with no rows: an empty page", () => {
    expect(assemblePage(eventListing, [], 100)).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it("builds a next cursor that the same listing accepts, and no other", () => {
    const rows = [makeClient(1, "Anna"), makeClient(2, "Bob")];
    const page = assemblePage(clientListing, rows, 1);
    const cursor = page.next_cursor as string;
    expect(Result.getOrThrow(parsePageRequest(clientListing, { cursor }))).toEqual({ limit: 100, after: ["Anna", 1] });
    expect(Result.isFailure(decodeCursor("recipes", cursor, clientListing.cursorKey))).toBe(true);
  });

  it("with limit + 1 rows: next_cursor decodes to the key of the last returned row (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }).chain((limit) => fc.tuple(fc.constant(limit), eventRowsArb(limit + 1, limit + 1))),
        ([limit, candidates]) => {
          expect(candidates).toHaveLength(limit + 1);
          const page = assemblePage(eventListing, candidates, limit);
          expect(page.has_more).toBe(true);
          expect(page.data).toEqual(candidates.slice(0, limit));
          expect(page.data).toHaveLength(limit);
          const last = candidates[limit - 1] as Event;
          expect(page.next_cursor).toEqual(expect.any(String));
          expect(Result.getOrThrow(decodeKey(eventListing, page.next_cursor as string))).toEqual([last.created_at, last.id]);
        },
      ),
    );
  });

  it("with at most limit rows: has_more is false and next_cursor is null (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }).chain((limit) => fc.tuple(fc.constant(limit), eventRowsArb(0, limit))),
        ([limit, rows]) => {
          const page = assemblePage(eventListing, rows, limit);
          expect(page.has_more).toBe(false);
          expect(page.next_cursor).toBeNull();
          expect(page.data).toEqual(rows);
        },
      ),
    );
  });

  it("round-trips unicode names through the next cursor (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: "binary" }).filter((s) => !s.includes("\u0000")), { minLength: 2, maxLength: 10 }),
        (names) => {
          const rows = names.map((name, i) => makeClient(i + 1, name));
          const limit = rows.length - 1;
          const page = assemblePage(clientListing, rows, limit);
          const last = rows[limit - 1] as Client;
          const request = Result.getOrThrow(parsePageRequest(clientListing, { cursor: page.next_cursor as string }));
          expect(request.after).toEqual([last.name, last.id]);
        },
      ),
    );
  });
});
