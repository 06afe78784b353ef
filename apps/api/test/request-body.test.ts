import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Reading request bodies on both create endpoints: JSON only (415 otherwise), at most 1 MiB (413),
 * an object (400 naming the problem otherwise). A refused body changes nothing.
 */

const MIB = 1024 * 1024;

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Bodies");
});
afterAll(() => api?.close());

const CREATE_PATHS = [
  { path: "/v1/events", table: "events" },
  { path: "/v1/clients", table: "clients" },
];

/** Rows of the organization in the table, and its outbox rows. */
const counts = async (table: string) => {
  const [row] = await api.sql<{ records: string; outbox: string }>(
    `select (select count(*) from ${table} where organization_id = ?) as records,
            (select count(*) from webhook_messages where organization_id = ?) as outbox`,
    [org.id, org.id],
  );
  return { records: Number(row!.records), outbox: Number(row!.outbox) };
};

const expectRefusedWithoutChange = async (table: string, send: () => Promise<{ status: number; body: any }>, status: number, error: RegExp) => {
  const before = await counts(table);
  const response = await send();
  expect(response.status).toBe(status);
  expect(response.body.error).toMatch(error);
  expect(await counts(table)).toEqual(before);
};

describe.each(CREATE_PATHS)("POST $path", ({ path, table }) => {
  it.each([
    ["a JSON array", "[]", /object/],
    ["an array holding an object", '[{"name":"x"}]', /object/],
    ["a JSON string", '"x"', /object/],
    ["a JSON number", "5", /object/],
    ["JSON null", "null", /object/],
    ["JSON true", "true", /object/],
    ["malformed JSON", '{"name": "x"', /JSON/],
    ["single-quoted JSON", "{'name': 'x'}", /JSON/],
    ["unquoted keys", "{name: 1}", /JSON/],
    ["a trailing comma", '{"name": "x",}', /JSON/],
    ["two JSON documents", '{"name":"a"}{"name":"b"}', /JSON/],
    ["NaN", '{"name": NaN}', /JSON/],
    ["plain text", "hello", /JSON/],
    ["an empty body", "", /body/],
    ["a blank body", "   \n ", /body/],
  ])("refuses %s with 400 naming the problem and stores nothing", async (_case, body, error) => {
    await expectRefusedWithoutChange(table, () => api.call("POST", path, { key: org.writeKey, body }), 400, error);
  });

  it("refuses a POST with no body at all with 400", async () => {
    await expectRefusedWithoutChange(table, () => api.call("POST", path, { key: org.writeKey, headers: { "content-type": "application/json" } }), 400, /body/);
  });

  it.each([
    "text/plain",
    "text/plain; charset=utf-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz",
    "application/xml",
    "application/jsonp",
    "text/json-ish",
  ])("refuses Content-Type %s with 415 and stores nothing", async (type) => {
    await expectRefusedWithoutChange(
      table,
      () => api.call("POST", path, { key: org.writeKey, body: JSON.stringify({ name: "Typed" }), headers: { "content-type": type } }),
      415,
      /./,
    );
  });

  it.each(["application/json", "application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"])(
    "accepts Content-Type %s",
    async (type) => {
      const response = await api.call("POST", path, { key: org.writeKey, body: JSON.stringify({ name: "Typed" }), headers: { "content-type": type } });
      expect(response.status).toBe(201);
    },
  );

  it("refuses a body over 1 MiB with 413 and stores nothing", async () => {
    const body = JSON.stringify({ name: "Big", company: "x".repeat(MIB) });
    await expectRefusedWithoutChange(table, () => api.call("POST", path, { key: org.writeKey, body }), 413, /./);
  });

  it("refuses a body of 1 MiB plus one byte with 413", async () => {
    const json = JSON.stringify({ name: "Edge" });
    const body = json + " ".repeat(MIB + 1 - json.length);
    await expectRefusedWithoutChange(table, () => api.call("POST", path, { key: org.writeKey, body }), 413, /./);
  });

  it("accepts a body of exactly 1 MiB (padded with JSON whitespace)", async () => {
    const json = JSON.stringify({ name: "Edge" });
    const body = json + " ".repeat(MIB - json.length);
    expect(Buffer.byteLength(body)).toBe(MIB);
    const response = await api.call("POST", path, { key: org.writeKey, body });
    expect(response.status).toBe(201);
  });

  it("reads the body as UTF-8", async () => {
    const response = await api.call("POST", path, { key: org.writeKey, body: JSON.stringify({ name: "Crème brûlée – 🍮 – 北京" }) });
    expect(response.status).toBe(201);
    const [row] = await api.sql<{ name: string }>(`select name from ${table} where id = ?`, [response.body.id]);
    expect(row!.name).toBe("Crème brûlée – 🍮 – 北京");
  });

  it("accepts JSON escapes and whitespace around the document", async () => {
    const response = await api.call("POST", path, { key: org.writeKey, body: '\n  {"name": "Caf\\u00e9"}  \n' });
    expect(response.status).toBe(201);
    const [row] = await api.sql<{ name: string }>(`select name from ${table} where id = ?`, [response.body.id]);
    expect(row!.name).toBe("Café");
  });
});
