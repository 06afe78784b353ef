import { CUT_MARKER, ECHOED_INPUT_MAX_CHARACTERS, ERROR_TEXT_MAX_CHARACTERS, type RequestLogRecord } from "@platter/domain";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import fc from "fast-check";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { REQUEST_HISTORY_DEFAULTS, RequestLogWriter } from "../src/request-log.ts";
import { type ApiClient, serveAnother } from "./api-harness.ts";

/**
 * The organizations' request log as the API writes it: in batches off the request path, every
 * failure of an authenticated request with its error text and a sample of the successes, each
 * row its own organization's; one organization's flood of failures cannot push another's
 * requests out of a flush; and no request's text (a NUL, a megabyte field name) nor a row the
 * database refuses can cost another organization its rows of the same flush.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
let c: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Logged A");
  b = await createOrganization(db, "Logged B");
  c = await createOrganization(db, "Logged C");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
type Logged = { organization_id: string; api_key_id: string; method: string; route: string; status: number; request_id: string; error: string | null };
const logged = (organizationId: number) =>
  rows<Logged>("select organization_id, api_key_id, method, route, status, request_id, error from api_requests where organization_id = ? order by id", [organizationId]);

/** An API whose request log keeps `successPercent` of successes, within `bounds`; flushed by hand. */
const serve = async (successPercent: number, bounds = { flushEveryMs: 60_000, maxBuffered: 10_000, perOrganization: 5_000 }) => {
  const writer = new RequestLogWriter(db.runtime, pino({ level: "silent" }), { ...REQUEST_HISTORY_DEFAULTS, successPercent }, bounds);
  const api = await serveAnother(db, UNTHROTTLED, {}, writer);
  return { api, writer };
};

const cleanLog = () => rows("delete from api_requests");

describe("the request log", () => {
  it("keeps every failure with its error text, and the successes at 100 %, each with its key, route and request id", async () => {
    await cleanLog();
    const { api, writer } = await serve(100);
    try {
      const ok = await api.call("GET", "/v1/events?limit=2", { key: a.readKey });
      const missing = await api.call("GET", "/v1/events/987654", { key: a.readKey });
      const invalid = await api.call("POST", "/v1/clients", { key: a.writeKey, body: { name: "" } });
      const forbidden = await api.call("POST", "/v1/clients", { key: a.readKey, body: { name: "x" } });
      expect([ok.status, missing.status, invalid.status, forbidden.status]).toEqual([200, 404, 400, 403]);
      // Nothing is written by the requests themselves: only the flush writes.
      expect(await logged(a.id)).toEqual([]);
      await writer.flush();
      expect(await logged(a.id)).toEqual([
        { organization_id: String(a.id), api_key_id: String(a.readKeyId), method: "GET", route: "/v1/events", status: 200, request_id: ok.headers.get("x-request-id"), error: null },
        { organization_id: String(a.id), api_key_id: String(a.readKeyId), method: "GET", route: "/v1/events/:id", status: 404, request_id: missing.headers.get("x-request-id"), error: missing.body.error },
        { organization_id: String(a.id), api_key_id: String(a.writeKeyId), method: "POST", route: "/v1/clients", status: 400, request_id: invalid.headers.get("x-request-id"), error: invalid.body.error },
        { organization_id: String(a.id), api_key_id: String(a.readKeyId), method: "POST", route: "/v1/clients", status: 403, request_id: forbidden.headers.get("x-request-id"), error: forbidden.body.error },
      ]);
      expect(writer.written).toBe(4);
    } finally {
      await api.close();
    }
  });

  it("keeps no success at 0 %, still every failure; and nothing of a request no key authenticated", async () => {
    await cleanLog();
    const { api, writer } = await serve(0);
    try {
      for (let i = 0; i < 5; i++) expect((await api.call("GET", "/v1/me", { key: a.readKey })).status).toBe(200);
      expect((await api.call("GET", "/v1/invoices/1", { key: a.readKey })).status).toBe(404);
      expect((await api.call("GET", "/v1/me", { key: "platter_ro_unknown" })).status).toBe(401);
      await writer.flush();
      expect((await logged(a.id)).map((entry) => entry.status)).toEqual([404]);
      expect(await rows("select count(*)::int as n from api_requests")).toEqual([{ n: 1 }]);
    } finally {
      await api.close();
    }
  });

  it("gives each organization its share of a flush: a flood of one organization's failures leaves another's requests logged", async () => {
    await cleanLog();
    const { api, writer } = await serve(100, { flushEveryMs: 60_000, maxBuffered: 10_000, perOrganization: 40 });
    try {
      const flood = async (client: ApiClient) => {
        for (let i = 0; i < 100; i++) await client.call("GET", "/v1/events/987654", { key: a.readKey });
      };
      await Promise.all([flood(api), flood(api)]);
      for (let i = 0; i < 10; i++) expect((await api.call("GET", "/v1/me", { key: b.readKey })).status).toBe(200);
      await writer.flush();
      expect((await logged(a.id)).length).toBe(40);
      expect((await logged(b.id)).length).toBe(10);
      expect(writer.drops.organizationShare).toBe(160);
    } finally {
      await api.close();
    }
  });

  it("writes a row only for the organization its key belongs to", async () => {
    await cleanLog();
    const { writer } = await serve(100);
    // A record naming B's key under A (which no request makes) is not written.
    writer.add({
      organization_id: a.id, api_key_id: b.readKeyId, at: new Date().toISOString(), method: "GET", route: "/v1/me", status: 200,
      duration_ms: 1, request_id: "req_mismatched", error: null,
    });
    await writer.flush();
    expect(writer.written).toBe(0);
    expect(await rows("select count(*)::int as n from api_requests")).toEqual([{ n: 0 }]);
  });

  it.each<[string, string, string]>([
    ["a NUL as a field name", '{"name":"x","\\u0000":1}', "unknown field: \uFFFD"],
    ["a NUL and a lone surrogate as a field name", '{"name":"x","a\\u0000\\ud800":1}', "unknown field: a\uFFFD\uFFFD"],
    [
      "a field name of a million letters",
      `{"name":"x","${"y".repeat(1_000_000)}":1}`,
      `unknown field: ${"y".repeat(ECHOED_INPUT_MAX_CHARACTERS - 1)}${CUT_MARKER}`,
    ],
  ])("answers %s with a bounded 400, and logs it beside another organization's 404s of the same flush", async (_label, body, error) => {
    await cleanLog();
    const { api, writer } = await serve(100);
    try {
      const refused = await api.call("POST", "/v1/clients", { key: a.writeKey, body });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(error);
      expect([...refused.body.error as string].length).toBeLessThanOrEqual(ERROR_TEXT_MAX_CHARACTERS);
      for (let i = 0; i < 3; i++) expect((await api.call("GET", "/v1/events/987654", { key: b.readKey })).status).toBe(404);
      await writer.flush();
      expect((await logged(a.id)).map((entry) => [entry.status, entry.error])).toEqual([[400, error]]);
      expect((await logged(b.id)).map((entry) => [entry.status, entry.error])).toEqual([[404, "Not found"], [404, "Not found"], [404, "Not found"]]);
      expect(writer.drops).toEqual({ full: 0, organizationShare: 0, failed: 0, refused: 0 });
    } finally {
      await api.close();
    }
  });

  it("answers and logs any field name (NULs, lone surrogates, emoji, thousands of characters) with a bounded, storable error (property)", async () => {
    await cleanLog();
    const { api, writer } = await serve(100);
    const piece = fc.oneof(
      fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }),
      fc.constantFrom("\u0000", "\uD800", "\uDFFF", "😀", "…", "x".repeat(5_000)),
    );
    const answered: string[] = [];
    try {
      await fc.assert(fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 6 }).map((pieces) => pieces.join("")), async (field) => {
        const response = await api.call("POST", "/v1/clients", { key: a.writeKey, body: JSON.stringify({ name: "x", [field]: 1 }) });
        expect(response.status).toBe(400);
        const error = response.body.error as string;
        expect(error.isWellFormed() && !error.includes("\u0000") && [...error].length <= ERROR_TEXT_MAX_CHARACTERS).toBe(true);
        answered.push(error);
      }), { numRuns: 40 });
      expect((await api.call("GET", "/v1/events/987654", { key: b.readKey })).status).toBe(404);
      await writer.flush();
      expect((await logged(a.id)).map((entry) => entry.error)).toEqual(answered);
      expect((await logged(b.id)).map((entry) => entry.status)).toEqual([404]);
      expect(writer.drops).toEqual({ full: 0, organizationShare: 0, failed: 0, refused: 0 });
    } finally {
      await api.close();
    }
  });

  /** A record as a request of `organization` with its read key makes it (`error` given as it is). */
  const recordOf = (organization: OrganizationFixture, requestId: string, changes: Partial<RequestLogRecord> = {}): RequestLogRecord => ({
    organization_id: organization.id, api_key_id: organization.readKeyId, at: new Date().toISOString(), method: "GET",
    route: "/v1/events/:id", status: 404, duration_ms: 1, request_id: requestId, error: "Not found", ...changes,
  });

  it.each<[string, Partial<RequestLogRecord>]>([
    ["a time PostgreSQL cannot read", { at: "not a time" }],
    ["a status beyond PostgreSQL's int", { status: 2 ** 40 }],
    ["a year PostgreSQL cannot store", { at: "+275760-09-13T00:00:00.000Z" }],
    // The log is partitioned by time, made ahead days at most: a clock a year off is no partition's.
    ["a time no partition of the log takes", { at: new Date(Date.now() + 400 * 24 * 3600_000).toISOString() }],
  ])("writes every good row of a flush when the database refuses one organization's row (%s), and counts that one refused", async (_label, poison) => {
    await cleanLog();
    const { writer } = await serve(100);
    const good = [
      ...Array.from({ length: 7 }, (_, i) => recordOf(a, `req_a_${i}`)),
      ...Array.from({ length: 5 }, (_, i) => recordOf(b, `req_b_${i}`)),
      ...Array.from({ length: 4 }, (_, i) => recordOf(c, `req_c_${i}`)),
    ];
    // The poisoned row bypasses the writer's own care (it is no text): the database refuses it, and its batch with it.
    const poisoned = recordOf(c, "req_c_poisoned", poison);
    for (const [index, record] of good.entries()) {
      writer.add(record);
      if (index === 9) writer.add(poisoned);
    }
    await writer.flush();
    const requestIds = async (organization: OrganizationFixture) => (await logged(organization.id)).map((entry) => entry.request_id).sort();
    expect(await requestIds(a)).toEqual(good.filter((r) => r.organization_id === a.id).map((r) => r.request_id).sort());
    expect(await requestIds(b)).toEqual(good.filter((r) => r.organization_id === b.id).map((r) => r.request_id).sort());
    expect(await requestIds(c)).toEqual(good.filter((r) => r.organization_id === c.id).map((r) => r.request_id).sort());
    expect(writer.written).toBe(16);
    expect(writer.drops).toEqual({ full: 0, organizationShare: 0, failed: 0, refused: 1 });
    // The next flush is whole again.
    writer.add(recordOf(b, "req_b_next"));
    await writer.flush();
    expect(await requestIds(b)).toContain("req_b_next");
  });
});
