import { createOrganization, type OrganizationFixture } from "@platter/persistence/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pino } from "pino";
import { createDeveloperAreaApp, makeSignInLink } from "../src/index.ts";
import { cookiePair, listen, postForm, type RunningArea, signIn, startArea } from "./developer-area-harness.ts";

/** Signing in with a single-use link, the session cookie, signing out, and pages that need a session. */

let area: RunningArea;
let org: OrganizationFixture;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Sign-in Caterers");
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);

describe("a sign-in link", () => {
  it("starts a session: an HttpOnly, SameSite=Lax cookie (not Secure over http) and a 303 to the area, with no referrer", async () => {
    const link = await area.link(org.id);
    expect(link).toMatch(new RegExp(`^${area.origin}/sign-in/[A-Za-z0-9_-]{43}$`));
    const response = await fetch(link, { redirect: "manual" });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/api-keys");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    const setCookie = response.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^platter_developer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=(2879\d|28800); HttpOnly; SameSite=Lax$/);
    const page = await fetch(`${area.origin}/api-keys`, { headers: { cookie: cookiePair(setCookie) } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sign-in Caterers");
  });

  it("behind https sets a Secure cookie bound to the host (__Host-)", async () => {
    const app = createDeveloperAreaApp(area.db.runtime, { developerAreaUrl: "https://developers.example.com", frameAncestors: "'self'" }, pino({ level: "silent" }));
    const { server, origin } = await listen(app.callback());
    try {
      const link = await area.db.run(makeSignInLink("https://developers.example.com", org.id, "application"));
      const response = await fetch(link.url.replace("https://developers.example.com", origin), { redirect: "manual" });
      expect(response.status).toBe(303);
      expect(response.headers.get("set-cookie")).toMatch(
        /^__Host-platter_developer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it("is not used up by a link checker's HEAD", async () => {
    const link = await area.link(org.id);
    const checked = await fetch(link, { method: "HEAD", redirect: "manual" });
    expect(checked.status).toBe(404);
    expect(checked.headers.get("set-cookie")).toBeNull();
    expect((await fetch(link, { redirect: "manual" })).status).toBe(303);
  });

  it("used a second time gets a clear page and no session", async () => {
    const link = await area.link(org.id);
    expect((await fetch(link, { redirect: "manual" })).status).toBe(303);
    const again = await fetch(link, { redirect: "manual" });
    expect(again.status).toBe(410);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await again.text()).toContain("This sign-in link was already used");
  });

  it("expired gets a clear page and no session", async () => {
    const link = await area.link(org.id);
    await rows("update developer_sign_in_links set expires_at = now() - interval '1 second' where token_hash = encode(sha256(?::bytea), 'hex')", [
      link.split("/").pop(),
    ]);
    const response = await fetch(link, { redirect: "manual" });
    expect(response.status).toBe(410);
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(await response.text()).toContain("This sign-in link has expired");
  });

  it.each([
    ["a token never issued", `/sign-in/${"A".repeat(43)}`],
    ["a short token", "/sign-in/abc"],
    ["markup in the token", "/sign-in/%3Cscript%3Ealert(1)%3C%2Fscript%3E"],
    ["a broken escape", "/sign-in/%E0%A4%A"],
    ["a NUL", "/sign-in/%00"],
    ["a very long token", `/sign-in/${"x".repeat(5000)}`],
  ])("with %s gets the invalid-link page and no session", async (_case, path) => {
    const response = await fetch(area.origin + path, { redirect: "manual" });
    expect(response.status).toBe(404);
    expect(response.headers.get("set-cookie")).toBeNull();
    const text = await response.text();
    expect(text).not.toContain("<script>alert");
    expect(text).toMatch(/This sign-in link is not valid|Page not found/);
  });
});

describe("pages without a session", () => {
  it.each([
    ["no cookie", undefined],
    ["an unknown session", `platter_developer_session=${"B".repeat(43)}`],
    ["a malformed cookie", "platter_developer_session=%%%"],
  ])("with %s ask to sign in (401) and show no organization data", async (_case, cookie) => {
    const response = await fetch(`${area.origin}/api-keys`, { headers: cookie === undefined ? {} : { cookie } });
    expect(response.status).toBe(401);
    const text = await response.text();
    expect(text).toContain("Sign in to the Developer area");
    expect(text).toContain("platter developer-area link --org");
    expect(text).not.toContain("Sign-in Caterers");
  });

  it("a POST without a session changes nothing and asks to sign in", async () => {
    const before = await rows<{ n: number }>("select count(*)::int as n from api_keys");
    const response = await postForm(area, "/api-keys", { name: "Sneaky", access: "read_write", form_token: "x" });
    expect(response.status).toBe(401);
    expect(await rows("select count(*)::int as n from api_keys")).toEqual(before);
  });

  it("the root leads to the keys when signed in, and to the sign-in page otherwise", async () => {
    const session = await signIn(area, await area.link(org.id));
    const signedIn = await fetch(`${area.origin}/`, { redirect: "manual", headers: { cookie: session.cookie } });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get("location")).toBe("/api-keys");
    const anonymous = await fetch(`${area.origin}/`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/sign-in");
    expect((await fetch(`${area.origin}/sign-in`)).status).toBe(401);
  });
});

describe("signing out", () => {
  it("ends the session at once and clears the cookie", async () => {
    const session = await signIn(area, await area.link(org.id));
    const response = await postForm(area, "/sign-out", { form_token: session.formToken }, { cookie: session.cookie });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/signed-out");
    expect(response.headers.get("set-cookie")).toBe("platter_developer_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax");
    expect((await fetch(`${area.origin}/api-keys`, { headers: { cookie: session.cookie } })).status).toBe(401);
    const signedOut = await fetch(`${area.origin}/signed-out`);
    expect(signedOut.status).toBe(200);
    expect(await signedOut.text()).toContain("You are signed out");
  });
});
