import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import type { OrganizationFixture } from "@platter/testing";

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization();
});
afterAll(() => api?.close());

const count = async (table: string, organizationId: number) => {
  const [row] = await api.sql<{ n: string }>(`select count(*) as n from ${table} where organization_id = ?`, [organizationId]);
  return Number(row!.n);
};

const post = (path: string, body: unknown, key: string | undefined, apiKey = org.writeKey) =>
  api.call("POST", path, { key: apiKey, body, headers: key === undefined ? {} : { "idempotency-key": key } });

describe("Idempotency-Key on POST", () => {
  it.each(["/v1/events", "/v1/clients"])("%s: a repeat with the same key and body replays the first response", async (path) => {
    const table = path === "/v1/events" ? "events" : "clients";
    const before = await count(table, org.id);
    const first = await post(path, { name: "Once only" }, `replay-${path}`);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // Key order and spacing do not make a different request.
    const again = await post(path, '{ "name" : "Once only" }', `replay-${path}`);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await count(table, org.id)).toBe(before + 1);
  });

  it("writes one outbox event however often the request is repeated", async () => {
    const before = await count("webhook_messages", org.id);
    for (let i = 0; i < 3; i++) expect((await post("/v1/clients", { name: "Outbox once" }, "outbox-once")).status).toBe(201);
    expect(await count("webhook_messages", org.id)).toBe(before + 1);
  });

  it("refuses the same key with a different body: 422, nothing created", async () => {
    expect((await post("/v1/clients", { name: "First" }, "reused")).status).toBe(201);
    const before = await count("clients", org.id);
    const reused = await post("/v1/clients", { name: "Second" }, "reused");
    expect(reused.status).toBe(422);
    expect(reused.body).toEqual({ error: "This Idempotency-Key was already used with a different request" });
    expect(await count("clients", org.id)).toBe(before);
  });

  it("treats the same key on another endpoint as a different request: 422", async () => {
    expect((await post("/v1/clients", { name: "Shared" }, "cross-endpoint")).status).toBe(201);
    expect((await post("/v1/events", { name: "Shared" }, "cross-endpoint")).status).toBe(422);
  });

  it("scopes keys to the organization: another organization's identical key creates its own record", async () => {
    const other = await api.newOrganization("Other Co");
    const mine = await post("/v1/clients", { name: "Same key" }, "per-org");
    const theirs = await post("/v1/clients", { name: "Same key" }, "per-org", other.writeKey);
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers.get("idempotent-replayed")).toBeNull();
  });

  it("creates exactly one record when the same request is sent concurrently", async () => {
    const before = await count("events", org.id);
    const responses = await Promise.all(Array.from({ length: 12 }, () => post("/v1/events", { name: "Race" }, "concurrent")));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThan(0);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    for (const conflict of responses.filter((r) => r.status === 409)) {
      expect(conflict.body.error).toMatch(/still being processed/);
    }
    expect(await count("events", org.id)).toBe(before + 1);
    const retry = await post("/v1/events", { name: "Race" }, "concurrent");
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(created[0]!.body.id);
  });

  it("forgets a key after 24 hours", async () => {
    const first = await post("/v1/clients", { name: "Old" }, "expired");
    await api.sql("update idempotency_keys set created_at = now() - interval '25 hours' where key = ?", ["expired"]);
    const later = await post("/v1/clients", { name: "Old" }, "expired");
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["too long", "k".repeat(256)],
    ["not ASCII", "clé"],
    ["a control character", "a\tb"],
  ])("refuses a key that is %s with 400 and creates nothing", async (_, key) => {
    const before = await count("clients", org.id);
    const response = await api.call("POST", "/v1/clients", {
      key: org.writeKey,
      body: { name: "Bad key" },
      headers: { "idempotency-key": key },
    }).catch(() => undefined);
    // fetch itself refuses some header values; those never reach the server, which is just as good.
    if (response !== undefined) {
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ error: "Idempotency-Key must be 1 to 255 printable ASCII characters" });
    }
    expect(await count("clients", org.id)).toBe(before);
  });

  it("accepts a key of exactly 255 printable characters", async () => {
    expect((await post("/v1/clients", { name: "Long key" }, "x".repeat(255))).status).toBe(201);
  });

  it("does not store failed requests: a corrected body with the same key is created", async () => {
    expect((await post("/v1/clients", {}, "fix-me")).status).toBe(400);
    expect((await post("/v1/clients", { name: "Fixed" }, "fix-me")).status).toBe(201);
  });

  it("checks the key only after the write permission: a read-only key still gets 403", async () => {
    expect((await post("/v1/clients", { name: "x" }, "read-only", org.readKey)).status).toBe(403);
  });
});
