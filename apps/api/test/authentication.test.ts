import { ApiKeyRepository } from "@platter/persistence";
import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/** Authentication and access: 401 for anything but a live key, 403 for writes with a read-only key. */

let api: ApiUnderTest;
let org: OrganizationFixture;
let readPaths: string[];

beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Auth");
  const event = await api.call("POST", "/v1/events", { key: org.writeKey, body: { name: "Auth event" } });
  expect(event.status).toBe(201);
  const [recipe] = await api.sql<{ id: string }>("insert into recipes (organization_id, name, servings) values (?, 'Stew', 6) returning id", [org.id]);
  const [invoice] = await api.sql<{ id: string }>(
    "insert into invoices (organization_id, number, currency, issue_date, due_date) values (?, 'A-1', 'EUR', '2026-01-01', '2026-01-31') returning id",
    [org.id],
  );
  readPaths = [
    "/v1/me",
    "/v1/events",
    `/v1/events/${event.body.id}`,
    "/v1/recipes",
    `/v1/recipes/${recipe!.id}`,
    "/v1/clients",
    "/v1/invoices",
    `/v1/invoices/${invoice!.id}`,
  ];
});
afterAll(() => api?.close());

const ENDPOINTS = [
  { method: "GET", path: "/v1/me" },
  { method: "GET", path: "/v1/events" },
  { method: "GET", path: "/v1/events/1" },
  { method: "POST", path: "/v1/events" },
  { method: "GET", path: "/v1/recipes" },
  { method: "GET", path: "/v1/recipes/1" },
  { method: "GET", path: "/v1/clients" },
  { method: "POST", path: "/v1/clients" },
  { method: "GET", path: "/v1/invoices" },
  { method: "GET", path: "/v1/invoices/1" },
];

const UNKNOWN_WELL_FORMED = `platter_rw_${"0".repeat(64)}`;

const BAD_AUTHORIZATION: ReadonlyArray<[string, string | undefined]> = [
  ["no Authorization header", undefined],
  ["an empty header", ""],
  ["the scheme alone", "Bearer"],
  ["the scheme and a space", "Bearer "],
  ["the key without a scheme", "KEY"],
  ["Basic scheme", "Basic KEY"],
  ["Token scheme", "Token KEY"],
  ["Bearer without a space", "BearerKEY"],
  ["a key with a suffix", "Bearer KEY-extra"],
  ["a key with a prefix", "Bearer xKEY"],
  ["two keys", "Bearer KEY KEY"],
  ["a truncated key", "Bearer KEY_TRUNCATED"],
  ["an upper-cased key", "Bearer KEY_UPPER"],
  ["random text", "Bearer hello-world"],
  ["a JWT-looking token", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.ZRrHA1JJJW8opsbCGfG_HACGpVUMN_a9IV7pAx_Zmeo"],
  ["an unknown well-formed key", `Bearer ${UNKNOWN_WELL_FORMED}`],
  ["an unknown well-formed read-only key", `Bearer platter_ro_${"f".repeat(64)}`],
];

/** Puts a real key into the header templates above. */
const headerWith = (template: string, key: string): string =>
  template
    .replaceAll("KEY_TRUNCATED", key.slice(0, -1))
    .replaceAll("KEY_UPPER", key.toUpperCase())
    .replaceAll("KEY", key);

describe("401 for anything but a live key", () => {
  const cases = ENDPOINTS.flatMap((endpoint) => BAD_AUTHORIZATION.map(([label, header]) => ({ ...endpoint, label, header })));

  it.each(cases)("$method $path with $label → 401", async ({ method, path, header }) => {
    const response = await api.call(method, path, {
      headers: header === undefined ? {} : { authorization: headerWith(header, org.writeKey) },
      ...(method === "POST" ? { body: { name: "Never stored" } } : {}),
    });
    expect(response.status).toBe(401);
    expect(Object.keys(response.body)).toEqual(["error"]);
  });

  it("stores nothing when a create is refused for authentication", async () => {
    const [before] = await api.sql<{ n: string }>("select count(*) as n from events where name = 'Never stored'");
    expect(Number(before!.n)).toBe(0);
    const [clients] = await api.sql<{ n: string }>("select count(*) as n from clients where name = 'Never stored'");
    expect(Number(clients!.n)).toBe(0);
  });

  it("answers every 401 with the same body, whatever the reason", async () => {
    const bodies = new Set<string>();
    for (const [, header] of BAD_AUTHORIZATION) {
      const response = await api.call("GET", "/v1/me", { headers: header === undefined ? {} : { authorization: headerWith(header, org.readKey) } });
      expect(response.status).toBe(401);
      bodies.add(JSON.stringify(response.body));
    }
    expect(bodies.size).toBe(1);
  });
});

describe("revoked keys", () => {
  it.each(ENDPOINTS)("$method $path with a revoked key → 401", async ({ method, path }) => {
    const own = await api.newOrganization("Revoked");
    await api.db.run(ApiKeyRepository.use((keys) => keys.revoke(own.scope, own.writeKeyId)));
    const response = await api.call(method, path, { key: own.writeKey, ...(method === "POST" ? { body: { name: "x" } } : {}) });
    expect(response.status).toBe(401);
  });

  it("refuses a key from the moment it is revoked, and leaves the organization's other keys working", async () => {
    const own = await api.newOrganization("Revoked later");
    expect((await api.call("GET", "/v1/me", { key: own.readKey })).status).toBe(200);
    await api.db.run(ApiKeyRepository.use((keys) => keys.revoke(own.scope, own.readKeyId)));
    expect((await api.call("GET", "/v1/me", { key: own.readKey })).status).toBe(401);
    expect((await api.call("GET", "/v1/events", { key: own.readKey })).status).toBe(401);
    expect((await api.call("GET", "/v1/me", { key: own.writeKey })).status).toBe(200);
    const created = await api.call("POST", "/v1/clients", { key: own.writeKey, body: { name: "Still allowed" } });
    expect(created.status).toBe(201);
  });
});

describe("expired and rolled keys", () => {
  it("refuses a key once it has expired, with the body of an unknown key", async () => {
    const own = await api.newOrganization("Expiring");
    const unknown = await api.call("GET", "/v1/me", { key: "platter_ro_notarealkey" });
    const key = await api.db.run(ApiKeyRepository.use((keys) => keys.create(own.scope, "read", "Expiring", 3_600_000)));
    expect((await api.call("GET", "/v1/me", { key: key.key })).status).toBe(200);
    await api.sql("update api_keys set expires_at = now() - interval '1 second' where id = ?", [key.id]);
    const refused = await api.call("GET", "/v1/me", { key: key.key });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(unknown.body);
  });

  it("keeps a rolled key working until its overlap ends, and its replacement after", async () => {
    const own = await api.newOrganization("Rolling");
    const rolled = await api.db.run(ApiKeyRepository.use((keys) => keys.roll(own.scope, own.writeKeyId, 3_600_000)));
    expect((await api.call("GET", "/v1/me", { key: own.writeKey })).status).toBe(200);
    expect((await api.call("POST", "/v1/clients", { key: rolled.key, body: { name: "With the new key" } })).status).toBe(201);
    await api.sql("update api_keys set expires_at = now() - interval '1 second' where id = ?", [own.writeKeyId]);
    expect((await api.call("GET", "/v1/me", { key: own.writeKey })).status).toBe(401);
    expect((await api.call("GET", "/v1/me", { key: rolled.key })).status).toBe(200);
  });
});

describe("read-only keys", () => {
  it("may use every GET endpoint", async () => {
    for (const path of readPaths) {
      const response = await api.call("GET", path, { key: org.readKey });
      expect(response.status, path).toBe(200);
    }
  });

  it("read/write keys may use every GET endpoint too", async () => {
    for (const path of readPaths) {
      const response = await api.call("GET", path, { key: org.writeKey });
      expect(response.status, path).toBe(200);
    }
  });

  it.each(["bearer", "BEARER"])("accept the scheme written %s (schemes are case-insensitive)", async (scheme) => {
    const response = await api.call("GET", "/v1/me", { headers: { authorization: `${scheme} ${org.readKey}` } });
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(org.id);
  });

  const writes = ["/v1/events", "/v1/clients"].flatMap((path) =>
    [
      ["a valid body", { name: "Read only" }],
      ["an empty object", {}],
      ["a body missing name", { email: "x@example.com" }],
      ["a body with an unknown field", { name: "x", colour: "red" }],
      ["malformed JSON", "{not json"],
      ["an empty body", ""],
      ["a JSON array", []],
    ].map(([label, body]) => ({ path, label: label as string, body })),
  );

  it.each(writes)("POST $path with $label → 403 (before the body is looked at)", async ({ path, body }) => {
    const response = await api.call("POST", path, { key: org.readKey, body });
    expect(response.status).toBe(403);
  });

  it.each(["/v1/events", "/v1/clients"])("POST %s with a read-only key and a non-JSON content type → 403", async (path) => {
    const response = await api.call("POST", path, { key: org.readKey, body: "name=x", headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(403);
  });

  it.each(["/v1/events", "/v1/clients"])("POST %s with a read-only key and a body over the size limit → 403", async (path) => {
    const response = await api.call("POST", path, { key: org.readKey, body: JSON.stringify({ name: "x".repeat(1_200_000) }) });
    expect(response.status).toBe(403);
  });

  it("store nothing when refused", async () => {
    const [counts] = await api.sql<{ events: string; clients: string; outbox: string }>(
      `select (select count(*) from events where organization_id = ? and name = 'Read only') as events,
              (select count(*) from clients where organization_id = ? and name = 'Read only') as clients,
              (select count(*) from webhook_messages where organization_id = ? and payload->'data'->>'name' = 'Read only') as outbox`,
      [org.id, org.id, org.id],
    );
    expect(counts).toEqual({ events: "0", clients: "0", outbox: "0" });
  });
});

describe("GET /v1/me", () => {
  it("returns the key's organization: id, name, currency", async () => {
    const own = await api.newOrganization("Me Catering", "JPY");
    for (const key of [own.readKey, own.writeKey]) {
      const response = await api.call("GET", "/v1/me", { key });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: own.id, name: "Me Catering", currency: "JPY" });
      expect(Number.isInteger(response.body.id)).toBe(true);
    }
  });
});
