import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, type CallOptions, startApiUnderTest } from "./api-harness.ts";

/**
 * Every response carries `x-request-id` (the harness checks it on every call of the suite; this
 * file shows it per kind of response), and a sane incoming id is echoed.
 */

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Request ids");
});
afterAll(() => api?.close());

const RESPONSES: ReadonlyArray<[string, number, string, string, () => CallOptions]> = [
  ["a read", 200, "GET", "/v1/me", () => ({ key: org.readKey })],
  ["a list", 200, "GET", "/v1/events", () => ({ key: org.readKey })],
  ["a create", 201, "POST", "/v1/clients", () => ({ key: org.writeKey, body: { name: "Traced" } })],
  ["a validation error", 400, "POST", "/v1/clients", () => ({ key: org.writeKey, body: {} })],
  ["a bad cursor", 400, "GET", "/v1/clients?cursor=nope", () => ({ key: org.readKey })],
  ["no key", 401, "GET", "/v1/me", () => ({})],
  ["a read-only write", 403, "POST", "/v1/events", () => ({ key: org.readKey, body: { name: "x" } })],
  ["a missing record", 404, "GET", "/v1/events/999999", () => ({ key: org.readKey })],
  ["an unknown endpoint", 404, "GET", "/v1/nothing", () => ({})],
  ["HEAD", 404, "HEAD", "/v1/me", () => ({ key: org.readKey })],
  ["an unlisted method", 404, "DELETE", "/v1/events", () => ({ key: org.writeKey })],
  ["a body too large", 413, "POST", "/v1/events", () => ({ key: org.writeKey, body: JSON.stringify({ name: "x".repeat(1_100_000) }) })],
  ["a wrong media type", 415, "POST", "/v1/events", () => ({ key: org.writeKey, body: "x", headers: { "content-type": "text/plain" } })],
];

describe("x-request-id", () => {
  it.each(RESPONSES)("is set on %s (%i)", async (_case, status, method, path, options) => {
    const response = await api.call(method, path, options());
    expect(response.status).toBe(status);
    expect(response.headers.get("x-request-id")).toMatch(/^\S+$/);
  });

  it.each(RESPONSES)("echoes a sane incoming id on %s (%i)", async (_case, status, method, path, options) => {
    const given = options();
    const response = await api.call(method, path, { ...given, headers: { ...given.headers, "x-request-id": "trace-42.a:b_C" } });
    expect(response.status).toBe(status);
    expect(response.headers.get("x-request-id")).toBe("trace-42.a:b_C");
  });

  it.each(["0b7c1e6a-5f2d-4a53-9d1e-4f4b3c2a1d0e", "abc", "x".repeat(128)])("echoes %s", async (id) => {
    const response = await api.call("GET", "/v1/me", { key: org.readKey, headers: { "x-request-id": id } });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe(id);
  });

  it.each([
    ["too long", "x".repeat(129)],
    ["with spaces", "a b c"],
    ["with markup", "<script>alert(1)</script>"],
    ["with quotes", '"quoted"'],
    ["with a newline escape", "a\\nb"],
    ["empty", ""],
  ])("replaces an incoming id %s with a new one", async (_case, id) => {
    const response = await api.call("GET", "/v1/me", { key: org.readKey, headers: { "x-request-id": id } });
    expect(response.status).toBe(200);
    const answered = response.headers.get("x-request-id");
    expect(answered).toMatch(/^[\w.:-]{1,128}$/);
    expect(answered).not.toBe(id);
  });

  it("gives each request its own id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const response = await api.call("GET", "/v1/me", { key: org.readKey });
      expect(response.status).toBe(200);
      ids.add(response.headers.get("x-request-id")!);
    }
    expect(ids.size).toBe(20);
  });
});
