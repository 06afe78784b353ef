import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Routing: the ten endpoints under /v1, and 404 `Unknown endpoint` for every other path or method,
 * decided before authentication.
 */

let api: ApiUnderTest;
let org: OrganizationFixture;
let ids: { event: number; recipe: number; invoice: number };

beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Routing");
  const [event] = await api.sql<{ id: string }>("insert into events (organization_id, name) values (?, 'Routed') returning id", [org.id]);
  const [recipe] = await api.sql<{ id: string }>("insert into recipes (organization_id, name, servings) values (?, 'Soup', 4) returning id", [org.id]);
  const [invoice] = await api.sql<{ id: string }>(
    "insert into invoices (organization_id, number, currency, issue_date, due_date) values (?, 'R-1', 'EUR', '2026-01-01', '2026-01-31') returning id",
    [org.id],
  );
  ids = { event: Number(event!.id), recipe: Number(recipe!.id), invoice: Number(invoice!.id) };
});
afterAll(() => api?.close());

const UNKNOWN = { error: "Unknown endpoint" };

/** The listed paths (with real ids) and the methods each one serves. */
const listedPaths = () => [
  { path: "/v1/me", methods: ["GET"] },
  { path: "/v1/events", methods: ["GET", "POST"] },
  { path: `/v1/events/${ids.event}`, methods: ["GET"] },
  { path: "/v1/recipes", methods: ["GET"] },
  { path: `/v1/recipes/${ids.recipe}`, methods: ["GET"] },
  { path: "/v1/clients", methods: ["GET", "POST"] },
  { path: "/v1/invoices", methods: ["GET"] },
  { path: `/v1/invoices/${ids.invoice}`, methods: ["GET"] },
];

const PATH_TEMPLATES = ["/v1/me", "/v1/events", "/v1/events/{id}", "/v1/recipes", "/v1/recipes/{id}", "/v1/clients", "/v1/invoices", "/v1/invoices/{id}"];
const resolve = (template: string): string =>
  template.replace("events/{id}", `events/${ids.event}`).replace("recipes/{id}", `recipes/${ids.recipe}`).replace("invoices/{id}", `invoices/${ids.invoice}`);

describe("the ten endpoints", () => {
  it("serves every listed GET with 200", async () => {
    for (const { path } of listedPaths()) {
      const response = await api.call("GET", path, { key: org.readKey });
      expect(response.status, path).toBe(200);
    }
  });

  it.each(["/v1/events", "/v1/clients"])("serves POST %s with 201", async (path) => {
    const response = await api.call("POST", path, { key: org.writeKey, body: { name: "Routed create" } });
    expect(response.status).toBe(201);
  });

  it("does not serve GET /v1/clients/{id}: it is not listed", async () => {
    const created = await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: "No detail" } });
    expect(created.status).toBe(201);
    const response = await api.call("GET", `/v1/clients/${created.body.id}`, { key: org.readKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(UNKNOWN);
  });
});

describe("unlisted methods on listed paths", () => {
  const cases = PATH_TEMPLATES.flatMap((template) =>
    ["PUT", "PATCH", "DELETE", "OPTIONS", "POST"]
      .filter((method) => !(method === "POST" && (template === "/v1/events" || template === "/v1/clients")))
      .flatMap((method) => [
        { method, template, auth: "a read/write key" },
        { method, template, auth: "no key" },
      ]),
  );

  it.each(cases)("$method $template with $auth → 404 Unknown endpoint", async ({ method, template, auth }) => {
    const response = await api.call(method, resolve(template), {
      ...(auth === "no key" ? {} : { key: org.writeKey }),
      ...(method === "GET" || method === "OPTIONS" ? {} : { body: { name: "x" } }),
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(UNKNOWN);
  });

  it.each(PATH_TEMPLATES.flatMap((template) => [{ template, key: true }, { template, key: false }]))(
    "HEAD $template (key: $key) → 404 without a body",
    async ({ template, key }) => {
      const response = await api.call("HEAD", resolve(template), key ? { key: org.readKey } : {});
      expect(response.status).toBe(404);
      expect(response.text).toBe("");
    },
  );

  it("answers a CORS preflight with 404 Unknown endpoint too", async () => {
    const response = await api.call("OPTIONS", "/v1/events", {
      headers: { origin: "https://example.com", "access-control-request-method": "POST" },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(UNKNOWN);
  });
});

describe("unlisted paths", () => {
  const paths = [
    "/",
    "/v1",
    "/v1/",
    "/v2/events",
    "/v0/me",
    "/events",
    "/me",
    "/V1/events",
    "/v1/EVENTS",
    "/v1/Me",
    "/v1/Clients",
    "/v1/me/",
    "/v1/events/",
    "/v1/recipes/",
    "/v1/clients/",
    "/v1/invoices/",
    "/v1/events/1/",
    "/v1/me/x",
    "/v1/events/1/dishes",
    "/v1/recipes/1/ingredients",
    "/v1/invoices/1/line_items",
    "/v1/clients/1",
    "/v1/clients/abc",
    "/v1//events",
    "/v1/events.json",
    "/v1/event",
    "/v1/organizations",
    "/v1/webhooks",
    "/v1/api_keys",
    "/healthz",
    "/readyz",
    "/v1/healthz",
    "/favicon.ico",
  ];
  const cases = paths.flatMap((path) =>
    ["GET", "POST"].flatMap((method) => [
      { method, path, auth: "a read/write key" },
      { method, path, auth: "no key" },
      { method, path, auth: "a malformed key" },
    ]),
  );

  it.each(cases)("$method $path with $auth → 404 Unknown endpoint", async ({ method, path, auth }) => {
    const headers: Record<string, string> = auth === "a malformed key" ? { authorization: "Bearer nonsense" } : {};
    const response = await api.call(method, path, {
      ...(auth === "a read/write key" ? { key: org.writeKey } : {}),
      headers,
      ...(method === "POST" ? { body: { name: "x" } } : {}),
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(UNKNOWN);
  });

  it.each(["/", "/v1/unknown", "/v1/EVENTS", "/v1/events/"])("HEAD %s → 404 without a body", async (path) => {
    const response = await api.call("HEAD", path);
    expect(response.status).toBe(404);
    expect(response.text).toBe("");
  });

  it("routes before reading the body: an unknown path with a broken body is still 404 Unknown endpoint", async () => {
    const response = await api.call("POST", "/v1/unknown", { key: org.writeKey, body: "{not json", headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(UNKNOWN);
  });
});
