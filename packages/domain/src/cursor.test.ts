import { createHash } from "node:crypto";
import { Result, Schema } from "effect";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { InvalidCursor } from "./errors.ts";
import { clientListing } from "./resources/client.ts";
import { eventListing } from "./resources/event.ts";
import { invoiceListing } from "./resources/invoice.ts";
import { recipeListing } from "./resources/recipe.ts";

const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A permissive key schema: any array of strings and integers. */
const AnyKey = Schema.Array(Schema.Union([Schema.String, Schema.Int]));

const expectInvalid = (result: Result.Result<unknown, InvalidCursor>): void => {
  const failure = Result.getOrThrow(Result.flip(result));
  expect(failure).toBeInstanceOf(InvalidCursor);
  expect(failure._tag).toBe("InvalidCursor");
};

const expectDecoded = <K>(result: Result.Result<K, InvalidCursor>, expected: unknown): void => {
  expect(Result.getOrThrow(result)).toEqual(expected);
};

/**
 * Builds a cursor by hand with the documented layout, independently of `encodeCursor`:
 * base64url( payload ‖ first 8 bytes of SHA-256(payload) ).
 */
const forge = (payload: string | Buffer): string => {
  const bytes = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  const sum = createHash("sha256").update(bytes).digest().subarray(0, 8);
  return Buffer.concat([bytes, sum]).toString("base64url");
};

// --- arbitraries -------------------------------------------------------------------------------

/** Any string the name columns can hold: full unicode incl. lone surrogates, but no NUL. */
const nameArb = fc
  .oneof(fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }), fc.string())
  .filter((s) => !s.includes("\u0000"));
const idArb = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const timestampArb = fc
  .date({ min: new Date("1970-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true })
  .map((d) => d.toISOString());
const endpointArb = fc.oneof(fc.constantFrom("events", "clients", "recipes", "invoices"), fc.string({ unit: "binary" }));
const anyKeyArb = fc.array(fc.oneof(fc.string({ unit: "binary" }), fc.integer()), { maxLength: 6 });

/** A valid cursor together with what it decodes to. */
const validCursorArb = fc.oneof(
  fc.tuple(timestampArb, idArb).map(([ts, id]) => ({
    listing: eventListing as typeof eventListing | typeof clientListing,
    key: [ts, id] as const,
  })),
  fc.tuple(nameArb, idArb).map(([name, id]) => ({
    listing: clientListing as typeof eventListing | typeof clientListing,
    key: [name, id] as const,
  })),
).map(({ listing, key }) => ({ listing, key, cursor: encodeCursor(listing.endpoint, key) }));

type Mutation =
  | { readonly kind: "replace"; readonly position: number; readonly char: string }
  | { readonly kind: "delete"; readonly position: number }
  | { readonly kind: "insert"; readonly position: number; readonly char: string }
  | { readonly kind: "append"; readonly char: string };

const applyMutation = (cursor: string, m: Mutation): string => {
  switch (m.kind) {
    case "replace":
      return cursor.slice(0, m.position) + m.char + cursor.slice(m.position + 1);
    case "delete":
      return cursor.slice(0, m.position) + cursor.slice(m.position + 1);
    case "insert":
      return cursor.slice(0, m.position) + m.char + cursor.slice(m.position);
    case "append":
      return cursor + m.char;
  }
};

const base64urlCharArb = fc.constantFrom(...BASE64URL_ALPHABET.split(""));

/** A single-character edit of `cursor`; a replacement always uses a different character. */
const mutationArb = (cursor: string): fc.Arbitrary<Mutation> =>
  fc.oneof(
    fc
      .tuple(fc.nat({ max: cursor.length - 1 }), base64urlCharArb)
      .filter(([position, char]) => cursor.charAt(position) !== char)
      .map(([position, char]): Mutation => ({ kind: "replace", position, char })),
    fc.nat({ max: cursor.length - 1 }).map((position): Mutation => ({ kind: "delete", position })),
    fc
      .tuple(fc.nat({ max: cursor.length }), base64urlCharArb)
      .map(([position, char]): Mutation => ({ kind: "insert", position, char })),
    base64urlCharArb.map((char): Mutation => ({ kind: "append", char })),
  );

// --- tests -------------------------------------------------------------------------------------

describe("encodeCursor", () => {
  it("produces unpadded base64url text", () => {
    fc.assert(
      fc.property(endpointArb, anyKeyArb, (endpoint, key) => {
        const cursor = encodeCursor(endpoint, key);
        expect(cursor).toMatch(BASE64URL);
        expect(cursor).not.toContain("=");
      }),
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(endpointArb, anyKeyArb, (endpoint, key) => {
        expect(encodeCursor(endpoint, key)).toBe(encodeCursor(endpoint, key));
      }),
    );
  });

  it("follows the documented layout: base64url(JSON [1, endpoint, ...key] ‖ 8-byte SHA-256 checksum)", () => {
    const key = ["2026-01-01T12:00:00.000Z", 42] as const;
    const cursor = encodeCursor("events", key);
    expect(cursor).toBe(forge(JSON.stringify([1, "events", ...key])));
  });

  it("gives different keys different cursors", () => {
    fc.assert(
      fc.property(anyKeyArb, anyKeyArb, (a, b) => {
        fc.pre(JSON.stringify(a) !== JSON.stringify(b));
        expect(encodeCursor("events", a)).not.toBe(encodeCursor("events", b));
      }),
    );
  });

  it("gives the same key different cursors on different endpoints", () => {
    fc.assert(
      fc.property(endpointArb, endpointArb, anyKeyArb, (a, b, key) => {
        fc.pre(a !== b);
        expect(encodeCursor(a, key)).not.toBe(encodeCursor(b, key));
      }),
    );
  });
});

describe("decodeCursor round trip", () => {
  it("round-trips arbitrary string and integer keys", () => {
    fc.assert(
      fc.property(endpointArb, anyKeyArb, (endpoint, key) => {
        expectDecoded(decodeCursor(endpoint, encodeCursor(endpoint, key), AnyKey), key);
      }),
      { numRuns: 500 },
    );
  });

  it("round-trips event listing keys (timestamp, id)", () => {
    fc.assert(
      fc.property(timestampArb, idArb, (ts, id) => {
        const cursor = encodeCursor(eventListing.endpoint, [ts, id]);
        expectDecoded(decodeCursor(eventListing.endpoint, cursor, eventListing.cursorKey), [ts, id]);
      }),
    );
  });

  it("round-trips invoice listing keys (timestamp, id)", () => {
    fc.assert(
      fc.property(timestampArb, idArb, (ts, id) => {
        const cursor = encodeCursor(invoiceListing.endpoint, [ts, id]);
        expectDecoded(decodeCursor(invoiceListing.endpoint, cursor, invoiceListing.cursorKey), [ts, id]);
      }),
    );
  });

  it("round-trips client and recipe listing keys with unicode names (name, id)", () => {
    fc.assert(
      fc.property(nameArb, idArb, fc.constantFrom(clientListing, recipeListing), (name, id, listing) => {
        const cursor = encodeCursor(listing.endpoint, [name, id]);
        expectDecoded(decodeCursor(listing.endpoint, cursor, listing.cursorKey), [name, id]);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ["empty name", ""],
    ["accents", "Crème brûlée"],
    ["emoji (astral plane)", "🎂 Party 🥂"],
    ["CJK", "結婚式"],
    ["right-to-left", "حفل زفاف"],
    ["combining marks", "e\u0301"],
    ["lone high surrogate", "\uD800"],
    ["lone low surrogate", "x\uDC00y"],
    ["JSON specials", '"\\/\b\f\n\r\t'],
    ["other control characters", "\u0001\u001f\u007f"],
    ["line/paragraph separators", "\u2028\u2029"],
  ])("round-trips a client name with %s", (_label, name) => {
    const cursor = encodeCursor("clients", [name, 7]);
    expectDecoded(decodeCursor("clients", cursor, clientListing.cursorKey), [name, 7]);
  });

  it("round-trips ids at the edges of the safe range", () => {
    for (const id of [1, 2, 2 ** 31, 2 ** 32 + 1, Number.MAX_SAFE_INTEGER]) {
      const cursor = encodeCursor("events", ["2026-01-01T00:00:00.000Z", id]);
      expectDecoded(decodeCursor("events", cursor, eventListing.cursorKey), ["2026-01-01T00:00:00.000Z", id]);
    }
  });
});

describe("decodeCursor rejects altered cursors", () => {
  const sampleKey = ["2026-03-14T15:09:26.535Z", 8979] as const;
  const sample = encodeCursor("events", sampleKey);
  /** The unaltered sample is accepted: what its alterations are refused for is the alteration. */
  const expectSampleAccepted = () => expectDecoded(decodeCursor("events", sample, eventListing.cursorKey), sampleKey);

  it("rejects every single-character replacement of a fixed cursor (exhaustive)", () => {
    expectSampleAccepted();
    let checked = 0;
    for (let position = 0; position < sample.length; position++) {
      for (const char of BASE64URL_ALPHABET) {
        if (char === sample.charAt(position)) continue;
        const altered = applyMutation(sample, { kind: "replace", position, char });
        expectInvalid(decodeCursor("events", altered, eventListing.cursorKey));
        checked++;
      }
    }
    expect(checked).toBe(sample.length * 63);
  });

  it("rejects every single-character deletion of a fixed cursor (exhaustive)", () => {
    expectSampleAccepted();
    for (let position = 0; position < sample.length; position++) {
      expectInvalid(decodeCursor("events", applyMutation(sample, { kind: "delete", position }), eventListing.cursorKey));
    }
  });

  it("rejects every single appended character of a fixed cursor (exhaustive)", () => {
    expectSampleAccepted();
    for (const char of BASE64URL_ALPHABET) {
      expectInvalid(decodeCursor("events", applyMutation(sample, { kind: "append", char }), eventListing.cursorKey));
    }
  });

  it("rejects every single-character change (replace, delete, insert, append) of any valid cursor", () => {
    fc.assert(
      fc.property(
        validCursorArb.chain((valid) => fc.tuple(fc.constant(valid), mutationArb(valid.cursor))),
        ([{ listing, key, cursor }, mutation]) => {
          expectDecoded(decodeCursor(listing.endpoint, cursor, listing.cursorKey), key);
          const altered = applyMutation(cursor, mutation);
          expect(altered).not.toBe(cursor);
          expectInvalid(decodeCursor(listing.endpoint, altered, listing.cursorKey));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("still accepts the unaltered cursor (sanity check for the mutation properties)", () => {
    fc.assert(
      fc.property(validCursorArb, ({ listing, key, cursor }) => {
        expectDecoded(decodeCursor(listing.endpoint, cursor, listing.cursorKey), key);
      }),
    );
  });

  it("rejects a non-canonical spelling that decodes to the same bytes (unused trailing bits set)", () => {
    const candidates = [1, 2, 3, 4, 5, 6, 7, 8].map((id) => {
      const cursor = encodeCursor("events", ["2026-01-01T00:00:00.000Z", id]);
      expectDecoded(decodeCursor("events", cursor, eventListing.cursorKey), ["2026-01-01T00:00:00.000Z", id]);
      return cursor;
    });
    const ragged = candidates.filter((c) => c.length % 4 !== 0);
    expect(ragged.length).toBeGreaterThan(0);
    for (const cursor of ragged) {
      const last = BASE64URL_ALPHABET.indexOf(cursor.charAt(cursor.length - 1));
      expect(last & 1).toBe(0); // a canonical encoder leaves the unused bits clear
      const spelling = cursor.slice(0, -1) + BASE64URL_ALPHABET.charAt(last | 1);
      expect(Buffer.from(spelling, "base64url")).toEqual(Buffer.from(cursor, "base64url"));
      expectInvalid(decodeCursor("events", spelling, eventListing.cursorKey));
    }
  });

  it("rejects the padded spelling of a valid cursor", () => {
    fc.assert(
      fc.property(validCursorArb, ({ listing, key, cursor }) => {
        const padding = "=".repeat((4 - (cursor.length % 4)) % 4);
        fc.pre(padding.length > 0);
        expectDecoded(decodeCursor(listing.endpoint, cursor, listing.cursorKey), key);
        expectInvalid(decodeCursor(listing.endpoint, cursor + padding, listing.cursorKey));
      }),
    );
  });

  it("rejects the standard-base64 spelling (+ and /) of a valid cursor", () => {
    fc.assert(
      fc.property(validCursorArb, ({ listing, key, cursor }) => {
        const standard = cursor.replaceAll("-", "+").replaceAll("_", "/");
        fc.pre(standard !== cursor);
        expectDecoded(decodeCursor(listing.endpoint, cursor, listing.cursorKey), key);
        expectInvalid(decodeCursor(listing.endpoint, standard, listing.cursorKey));
      }),
    );
  });

  it("rejects a valid cursor with surrounding whitespace", () => {
    expectSampleAccepted();
    for (const altered of [` ${sample}`, `${sample} `, `${sample}\n`, `\t${sample}`]) {
      expectInvalid(decodeCursor("events", altered, eventListing.cursorKey));
    }
  });
});

describe("decodeCursor binds cursors to their endpoint", () => {
  it.each([
    ["clients", "recipes"],
    ["recipes", "clients"],
    ["events", "invoices"],
    ["invoices", "events"],
  ])("rejects a %s cursor on %s even though the key shape matches", (from, to) => {
    const key = from === "clients" || from === "recipes" ? ["Anna", 3] : ["2026-01-01T00:00:00.000Z", 3];
    const listings = { clients: clientListing, recipes: recipeListing, events: eventListing, invoices: invoiceListing };
    const target = listings[to as keyof typeof listings];
    const cursor = encodeCursor(from, key);
    // Sanity: it is valid where it was issued.
    expect(Result.isSuccess(decodeCursor(from, cursor, listings[from as keyof typeof listings].cursorKey))).toBe(true);
    expectInvalid(decodeCursor(to, cursor, target.cursorKey));
  });

  it("rejects a cursor from any other endpoint (property)", () => {
    fc.assert(
      fc.property(endpointArb, endpointArb, anyKeyArb, (issuer, reader, key) => {
        fc.pre(issuer !== reader);
        const cursor = encodeCursor(issuer, key);
        expectDecoded(decodeCursor(issuer, cursor, AnyKey), key);
        expectInvalid(decodeCursor(reader, cursor, AnyKey));
      }),
    );
  });

  it("compares endpoints exactly (case and whitespace matter)", () => {
    const cursor = encodeCursor("events", ["2026-01-01T00:00:00.000Z", 1]);
    expectDecoded(decodeCursor("events", cursor, eventListing.cursorKey), ["2026-01-01T00:00:00.000Z", 1]);
    for (const reader of ["Events", "EVENTS", "events ", " events", "event", "events/"]) {
      expectInvalid(decodeCursor(reader, cursor, eventListing.cursorKey));
    }
  });
});

describe("decodeCursor rejects garbage", () => {
  it.each([
    ["empty string", ""],
    ["single character", "A"],
    ["short valid base64url", "AAAA"],
    ["exactly 8 bytes (checksum only, no payload)", Buffer.alloc(8).toString("base64url")],
    ["9 zero bytes", Buffer.alloc(9).toString("base64url")],
    ["word", "garbage"],
    ["padding only", "===="],
    ["space", "abc def"],
    ["plus", "abc+def"],
    ["slash", "abc/def"],
    ["dot", "abc.def"],
    ["percent-encoded", "abc%3D"],
    ["unicode letters", "ÄÖÜäöü"],
    ["emoji", "🎂🎂🎂🎂"],
    ["NUL", "AAAA\u0000AAAA"],
    ["newline", "AAAA\nAAAA"],
    ["JSON text", '[1,"events","2026-01-01T00:00:00.000Z",1]'],
    ["plain base64url JSON without checksum", Buffer.from('[1,"events","2026-01-01T00:00:00.000Z",1]').toString("base64url")],
    ["long string of A", "A".repeat(10_000)],
  ])("rejects %s", (_label, cursor) => {
    expectInvalid(decodeCursor("events", cursor, eventListing.cursorKey));
    expectInvalid(decodeCursor("events", cursor, AnyKey));
  });

  it("rejects arbitrary strings (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (cursor) => {
        expectInvalid(decodeCursor("events", cursor, AnyKey));
      }),
      { numRuns: 1000 },
    );
  });

  it("rejects the base64url encoding of arbitrary bytes (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        expectInvalid(decodeCursor("events", Buffer.from(bytes).toString("base64url"), AnyKey));
      }),
      { numRuns: 1000 },
    );
  });

  it("rejects any string containing a character outside the base64url alphabet", () => {
    const valid = encodeCursor("events", ["2026-01-01T00:00:00.000Z", 1]);
    expectDecoded(decodeCursor("events", valid, AnyKey), ["2026-01-01T00:00:00.000Z", 1]);
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => !BASE64URL_ALPHABET.includes(c)),
        fc.nat({ max: valid.length }),
        (char, position) => {
          expectInvalid(decodeCursor("events", valid.slice(0, position) + char + valid.slice(position), AnyKey));
        },
      ),
    );
  });
});

describe("decodeCursor rejects well-formed cursors with a bad payload", () => {
  it.each([
    ["not JSON", "not json"],
    ["truncated JSON", '[1,"events","2026-01-01T00:00:00.000Z",'],
    ["JSON object", '{"version":1,"endpoint":"events"}'],
    ["JSON string", '"events"'],
    ["JSON number", "1"],
    ["JSON null", "null"],
    ["empty array", "[]"],
    ["version 2", '[2,"events","2026-01-01T00:00:00.000Z",1]'],
    ["version 0", '[0,"events","2026-01-01T00:00:00.000Z",1]'],
    ["version as string", '["1","events","2026-01-01T00:00:00.000Z",1]'],
    ["missing endpoint", "[1]"],
    ["endpoint as number", '[1,5,"2026-01-01T00:00:00.000Z",1]'],
  ])("rejects a correctly checksummed payload that is %s", (_label, payload) => {
    expectInvalid(decodeCursor("events", forge(payload), eventListing.cursorKey));
    expectInvalid(decodeCursor("events", forge(payload), AnyKey));
  });

  it("accepts a hand-built cursor with the documented layout (the forge helper is faithful)", () => {
    const cursor = forge('[1,"events","2026-01-01T00:00:00.000Z",1]');
    expectDecoded(decodeCursor("events", cursor, eventListing.cursorKey), ["2026-01-01T00:00:00.000Z", 1]);
  });

  it("rejects a payload with a wrong checksum", () => {
    const payload = Buffer.from('[1,"events","2026-01-01T00:00:00.000Z",1]');
    const cursor = Buffer.concat([payload, Buffer.alloc(8)]).toString("base64url");
    expectInvalid(decodeCursor("events", cursor, eventListing.cursorKey));
  });
});

describe("decodeCursor rejects valid cursors whose key has the wrong shape", () => {
  const ts = "2026-01-01T12:00:00.000Z";

  it.each<[string, ReadonlyArray<string | number>]>([
    ["swapped key parts", [1, ts]],
    ["id as string", [ts, "1"]],
    ["timestamp as number", [Date.parse(ts), 1]],
    ["id zero", [ts, 0]],
    ["negative id", [ts, -1]],
    ["fractional id", [ts, 1.5]],
    ["id beyond the safe range", [ts, Number.MAX_SAFE_INTEGER + 1]],
    ["huge id", [ts, 1e300]],
    ["missing id", [ts]],
    ["empty key", []],
    ["extra key part", [ts, 1, "extra"]],
    ["date without time", ["2026-01-01", 1]],
    ["timestamp without milliseconds", ["2026-01-01T12:00:00Z", 1]],
    ["timestamp with offset", ["2026-01-01T12:00:00.000+01:00", 1]],
    ["timestamp with microseconds", ["2026-01-01T12:00:00.000000Z", 1]],
    ["month 13", ["2026-13-01T12:00:00.000Z", 1]],
    ["day 32", ["2026-01-32T12:00:00.000Z", 1]],
    ["hour 25", ["2026-01-01T25:00:00.000Z", 1]],
    ["free text", ["yesterday", 1]],
  ])("event cursor with %s", (_label, key) => {
    const cursor = encodeCursor("events", key);
    expectInvalid(decodeCursor("events", cursor, eventListing.cursorKey));
  });

  it.each<[string, ReadonlyArray<string | number>]>([
    ["name as number", [5, 1]],
    ["name with NUL", ["a\u0000b", 1]],
    ["id as string", ["Anna", "1"]],
    ["id zero", ["Anna", 0]],
    ["fractional id", ["Anna", 2.5]],
    ["missing id", ["Anna"]],
    ["extra key part", ["Anna", 1, 2]],
  ])("client cursor with %s", (_label, key) => {
    expectInvalid(decodeCursor("clients", encodeCursor("clients", key), clientListing.cursorKey));
  });

  it("rejects wrongly typed ids on any listing (property)", () => {
    const badId = fc.oneof(
      fc.integer({ max: 0 }),
      fc.double({ noNaN: true }).filter((n) => !Number.isSafeInteger(n) || n < 1),
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(eventListing, invoiceListing, clientListing, recipeListing),
        timestampArb,
        badId,
        (listing, first, id) => {
          // The same key with a good id is accepted: the id is what is refused.
          expectDecoded(decodeCursor(listing.endpoint, encodeCursor(listing.endpoint, [first, 1]), listing.cursorKey), [first, 1]);
          // JSON has no NaN/Infinity: they would arrive as null, which is just as wrong.
          const cursor = encodeCursor(listing.endpoint, [first, id]);
          expectInvalid(decodeCursor(listing.endpoint, cursor, listing.cursorKey));
        },
      ),
    );
  });
});
