import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The area's edge: security headers on every response, forms refused without the session's token
 * or from another origin, a 404 page for anything unknown, and no 500 for any input.
 */

let area: RunningArea;
let embedded: RunningArea;
let org: OrganizationFixture;
let session: TestSession;
let other: TestSession;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  embedded = await startArea(inject("pgAdminUrl"), "'self' https://app.example.com");
  org = await createOrganization(area.db, "Edge Caterers");
  session = await signIn(area, await area.link(org.id));
  other = await signIn(area, await area.link((await createOrganization(area.db, "Other Caterers")).id));
});
afterAll(async () => {
  await area?.stop();
  await embedded?.stop();
});

const keyCount = async () => (await area.db.orm.em.getConnection().execute<{ n: number }[]>("select count(*)::int as n from api_keys"))[0]!.n;

describe("security headers", () => {
  const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'";

  it.each([
    ["the keys page", "/api-keys", 200, true],
    ["the sign-in page", "/sign-in", 401, false],
    ["an unknown page", "/nowhere", 404, false],
    ["a refused link", `/sign-in/${"C".repeat(43)}`, 404, false],
    ["the stylesheet", "/assets/developer-area.css", 200, false],
    ["the script", "/assets/developer-area.js", 200, false],
  ])("are on %s", async (_case, path, status, withSession) => {
    const response = await fetch(area.origin + path, { headers: withSession ? { cookie: session.cookie } : {} });
    expect(response.status).toBe(status);
    expect(response.headers.get("content-security-policy")).toBe(CSP);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("referrer-policy")).toMatch(/^(same-origin|strict-origin)$/);
    expect(response.headers.get("cache-control")).toBe(path.startsWith("/assets/") ? "public, max-age=300" : "no-store");
  });

  it("are on a refused form too", async () => {
    const response = await postForm(area, "/api-keys", { name: "x", access: "read" }, { cookie: session.cookie });
    expect(response.status).toBe(403);
    expect(response.headers.get("content-security-policy")).toBe(CSP);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("let DEVELOPER_AREA_FRAME_ANCESTORS name who may embed the area", async () => {
    const response = await fetch(`${embedded.origin}/sign-in`);
    expect(response.status).toBe(401);
    expect(response.headers.get("content-security-policy")).toMatch(/; frame-ancestors 'self' https:\/\/app\.example\.com$/);
  });

  it("pages load no script or style but our own, and no inline script", async () => {
    const page = await (await fetch(`${area.origin}/api-keys`, { headers: { cookie: session.cookie } })).text();
    expect([...page.matchAll(/<script\b[^>]*>/g)].map((m) => m[0])).toEqual(['<script src="/assets/developer-area.js" defer>']);
    expect([...page.matchAll(/<link\b[^>]*>/g)].map((m) => m[0])).toEqual(['<link rel="stylesheet" href="/assets/developer-area.css">']);
    expect(page).not.toMatch(/\son\w+=|style=/);
  });
});

describe("forms", () => {
  it.each([
    ["no form token", () => ({ fields: {}, headers: { cookie: session.cookie } })],
    ["a wrong form token", () => ({ fields: { form_token: "x".repeat(43) }, headers: { cookie: session.cookie } })],
    ["another session's form token", () => ({ fields: { form_token: other.formToken }, headers: { cookie: session.cookie } })],
    ["another site's Origin", () => ({ fields: { form_token: session.formToken }, headers: { cookie: session.cookie, origin: "https://evil.example" } })],
    ["Origin: null", () => ({ fields: { form_token: session.formToken }, headers: { cookie: session.cookie, origin: "null" } })],
    ["a cross-site fetch", () => ({ fields: { form_token: session.formToken }, headers: { cookie: session.cookie, "sec-fetch-site": "cross-site" } })],
  ])("with %s are refused (403) and change nothing", async (_case, make) => {
    const { fields, headers } = make();
    const before = await keyCount();
    for (const path of ["/api-keys", `/api-keys/${org.readKeyId}/revoke`, "/sign-out"]) {
      const response = await postForm(area, path, { name: "Forged", access: "read_write", ...fields }, headers);
      expect(response.status).toBe(403);
      expect(await response.text()).toContain("This form could not be accepted");
    }
    expect(await keyCount()).toBe(before);
    expect((await fetch(`${area.origin}/api-keys`, { headers: { cookie: session.cookie } })).status).toBe(200);
    const [key] = await area.db.orm.em.getConnection().execute<{ revoked_at: string | null }[]>("select revoked_at from api_keys where id = ?", [org.readKeyId]);
    expect(key!.revoked_at).toBeNull();
  });

  it.each([
    ["JSON", "application/json", '{"name":"x"}'],
    ["multipart", "multipart/form-data; boundary=x", "--x--"],
    ["no content type", "", "name=x"],
  ])("sent as %s are refused as unreadable (400)", async (_case, type, body) => {
    const response = await fetch(`${area.origin}/api-keys`, {
      method: "POST",
      headers: { cookie: session.cookie, origin: area.origin, ...(type === "" ? {} : { "content-type": type }) },
      body: type === "" ? new Blob([body]) : body,
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("This form could not be read");
  });

  it("over 16 KiB is refused (400) and creates nothing", async () => {
    const before = await keyCount();
    const response = await postForm(area, "/api-keys", { form_token: session.formToken, name: "x".repeat(20_000), access: "read" }, { cookie: session.cookie });
    expect(response.status).toBe(400);
    expect(await keyCount()).toBe(before);
  });
});

describe("unknown pages", () => {
  it.each([
    ["GET", "/nowhere"],
    ["GET", "/api-keys/"],
    ["GET", "/API-KEYS"],
    ["GET", "/api-keys/abc/revoke"],
    ["GET", "/api-keys/0/revoke"],
    ["GET", "/api-keys/1e3/revoke"],
    ["GET", "/api-keys/99999999999999999999999/revoke"],
    ["GET", "/sign-in/"],
    ["GET", "/assets/../package.json"],
    ["GET", "/assets/nope.css"],
    ["GET", "/v1/me"],
    ["PUT", "/api-keys"],
    ["DELETE", "/api-keys"],
    ["PATCH", "/api-keys"],
    ["OPTIONS", "/api-keys"],
    ["HEAD", "/api-keys"],
    ["POST", "/nowhere"],
    ["GET", "/%E0%A4%A"],
    ["GET", "/api-keys/%00/revoke"],
  ])("%s %s is the 404 page", async (method, path) => {
    const response = await fetch(area.origin + path, { method, headers: { cookie: session.cookie }, redirect: "manual" });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await response.text()).toContain(method === "HEAD" ? "" : "Page not found");
  });
});

describe("any input", () => {
  const junk = ["", "%", "%zz", "<b>", "'\"", "\u0000", "\ud800", "é".repeat(300), "a=b&c", "🍰"];

  it("never answers 500 on a query, a form field or a cookie", async () => {
    const statuses = new Set<number>();
    for (const value of junk) {
      const encoded = encodeURIComponent(value.replace("\ud800", "?"));
      statuses.add((await fetch(`${area.origin}/api-keys?revoked=${encoded}`, { headers: { cookie: session.cookie } })).status);
      statuses.add((await postForm(area, "/api-keys", { form_token: session.formToken, name: value, access: value }, { cookie: session.cookie })).status);
      statuses.add((await postForm(area, "/api-keys", { form_token: value, name: value }, { cookie: session.cookie })).status);
      statuses.add((await fetch(`${area.origin}/api-keys`, { headers: { cookie: `platter_developer_session=${encoded}` } })).status);
      statuses.add((await fetch(`${area.origin}/sign-in/${encoded}`, { redirect: "manual" })).status);
    }
    expect([...statuses].sort()).toEqual([200, 400, 401, 403, 404]);
  });
});
