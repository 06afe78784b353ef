import type { OrganizationFixture } from "@platter/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import { LISTED_RESOURCES, tiedKeys } from "./listed-resources.ts";

/**
 * Property tests: whatever a caller sends, the API answers with a decision (201 or 400 with an
 * `error` text for bodies; 200 or 400 for list queries), never with a 5xx.
 */

const RUNS = 200;

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Fuzzed");
});
afterAll(() => api?.close());

/** Strings that have broken JSON, Unicode and database layers before. */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 60 }),
  fc.constantFrom(
    "", " ", "\u0000", "a\u0000b", "\ud800", "x\udfff", "\ud83c\udf70", "\uffff", "\u202e", "💩".repeat(100), "null", "NaN",
    "2026-02-30", "2026-02-28", "0000-01-01", "9999-12-31", "-1", "1e400", "' or 1=1 --", "\\", "\"", "%00", "a".repeat(5_000),
  ),
);

/** Numbers at the edges: huge, tiny, negative, fractional, beyond safe integers. */
const edgyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 1, -1, 0.1, 12.345, 1e21, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 100_000, 100_001, 2 ** 31, 2 ** 63),
);

const anyValue = fc.oneof(nastyString, edgyNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }));

const EVENT_FIELDS = ["name", "event_date", "guests", "price_per_head", "event_type"];
const CLIENT_FIELDS = ["name", "email", "phone", "company"];

/** Objects with the endpoint's fields (and sometimes others) holding any kind of value. */
const fieldBodies = (fields: string[]) =>
  fc
    .tuple(
      fc.record(Object.fromEntries(fields.map((field) => [field, anyValue])), { requiredKeys: [] }),
      fc.option(fc.dictionary(fc.oneof(fc.string(), fc.constantFrom("__proto__", "constructor", "id")), anyValue, { maxKeys: 3 }), { freq: 4 }),
    )
    .map(([known, extra]) => JSON.stringify({ ...(extra ?? {}), ...known }));

/** Text made of pieces that trouble text columns and JSON encoders: NUL, lone surrogates, BOM, bidi marks. */
const trickyText = fc
  .array(fc.oneof(fc.constantFrom("\u0000", "\ud800", "\udfff", "\ufeff", "\uffff", "\u202e", "\\", "\""), fc.string({ unit: "binary", minLength: 1, maxLength: 4 })), {
    minLength: 1,
    maxLength: 6,
  })
  .map((pieces) => pieces.join(""));

/** Well-shaped bodies whose texts carry tricky characters, so they get past the shape checks. */
const shapedBodies = fc.oneof(
  fc.record({ name: trickyText, event_date: fc.constant("2026-06-01"), guests: fc.constant(10) }, { requiredKeys: ["name"] }),
  fc.record(
    {
      name: trickyText,
      email: trickyText.map((text) => `${text.replace(/[\s@]/g, "") || "x"}@example.com`),
      phone: fc.constant("+44 20 7946 0000"),
      company: trickyText,
    },
    { requiredKeys: ["name"] },
  ),
).map((body) => JSON.stringify(body));

/** Raw JSON texts with number literals a double cannot hold. */
const hugeNumberBodies = fc
  .tuple(fc.constantFrom(...EVENT_FIELDS, ...CLIENT_FIELDS), fc.stringMatching(/^-?\d{1,400}(\.\d{1,60})?([eE][+-]?\d{1,5})?$/))
  .map(([field, literal]) => `{"name":"Huge","${field}":${literal}}`);

/** Every kind of body: random JSON, random JavaScript values as JSON, field-shaped objects, raw text. */
const anyBody = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.anything().map((value) => JSON.stringify(value) ?? ""),
  fc.object().map((value) => JSON.stringify(value)),
  fieldBodies(EVENT_FIELDS),
  fieldBodies(CLIENT_FIELDS),
  hugeNumberBodies,
  shapedBodies,
  shapedBodies,
  fc.string({ unit: "binary", maxLength: 200 }),
);

describe.each(["/v1/events", "/v1/clients"])("POST %s with random bodies", (path) => {
  it(`answers 201 with {id} or 400 with an error text, never a 5xx (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(anyBody, async (body) => {
        const response = await api.call("POST", path, { key: org.writeKey, body });
        expect([201, 400], `${path} ${JSON.stringify(body).slice(0, 300)} → ${response.status} ${response.text}`).toContain(response.status);
        if (response.status === 201) expect(Object.keys(response.body)).toEqual(["id"]);
        else expect(typeof response.body.error).toBe("string");
      }),
      { numRuns: RUNS },
    );
  });
});

describe("known troublemakers", () => {
  it.each([
    ["/v1/events", { name: "\ud800" }],
    ["/v1/events", { name: "x\udfff" }],
    ["/v1/clients", { name: "\ud800" }],
    ["/v1/clients", { name: "ok", company: "\udc00" }],
    ["/v1/clients", { name: "ok", email: "a\u0000@example.com" }],
    ["/v1/clients", { name: "ok", email: "\ud800@example.com" }],
    ["/v1/events", { name: "ok", event_type: "other", event_date: "9999-12-31" }],
    ["/v1/events", { name: "ok", price_per_head: 5e-324 }],
    ["/v1/events", { name: "ok", price_per_head: 10_000_000_000 }],
  ])("POST %s %j → 201 or 400, never a 5xx", async (path, body) => {
    const response = await api.call("POST", path, { key: org.writeKey, body });
    expect([201, 400], `${response.status} ${response.text}`).toContain(response.status);
  });
});

describe.each(LISTED_RESOURCES)("GET $path with random query strings", (resource) => {
  let validCursor: string;
  beforeAll(async () => {
    await resource.insert(api.sql, org.id, tiedKeys(12));
    const page = await api.call("GET", `${resource.path}?limit=5`, { key: org.readKey });
    expect(page.status).toBe(200);
    validCursor = page.body.next_cursor;
  });

  const queryValue = fc.oneof(nastyString, edgyNumber.map(String), fc.string({ unit: "binary-ascii" }));

  it(`answers 200 or 400 Invalid cursor for random limit and cursor values, never a 5xx (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(queryValue), fc.option(queryValue), async (limit, cursor) => {
        const params = new URLSearchParams();
        if (limit !== null) params.set("limit", limit);
        if (cursor !== null) params.set("cursor", cursor);
        const response = await api.call("GET", `${resource.path}?${params}`, { key: org.readKey });
        expect([200, 400], `${params} → ${response.status} ${response.text}`).toContain(response.status);
        if (response.status === 400) expect(response.body).toEqual({ error: "Invalid cursor" });
        if (cursor === null) expect(response.status).toBe(200);
      }),
      { numRuns: RUNS },
    );
  });

  it(`answers 200 or 400 for raw query strings, never a 5xx (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary-ascii", maxLength: 80 }), async (raw) => {
        const query = raw.replace(/[#\s]/g, "");
        const response = await api.call("GET", `${resource.path}?${query}`, { key: org.readKey });
        expect([200, 400], `?${query} → ${response.status} ${response.text}`).toContain(response.status);
      }),
      { numRuns: RUNS },
    );
  });

  it(`refuses every altered valid cursor with 400 Invalid cursor (${RUNS} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.string({ unit: "binary-ascii", minLength: 1, maxLength: 3 }), fc.nat({ max: 3 }), async (at, text, cut) => {
        const index = at % validCursor.length;
        const altered = validCursor.slice(0, index) + text + validCursor.slice(index + cut);
        fc.pre(altered !== validCursor);
        const response = await api.call("GET", `${resource.path}?${new URLSearchParams({ cursor: altered })}`, { key: org.readKey });
        expect(response.status, altered).toBe(400);
        expect(response.body).toEqual({ error: "Invalid cursor" });
      }),
      { numRuns: RUNS },
    );
  });
});
