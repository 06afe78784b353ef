import { makeSignInLink } from "@platter/application";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { pino } from "pino";
import { createDeveloperAreaApp } from "../src/index.ts";
import {
  cookiePair, formTokenIn, listen, postForm, type RunningArea, signIn, startArea, useLink,
} from "./developer-area-harness.ts";

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
  it("opens a page naming the organization, with a button that POSTs the link back; the GET uses nothing up", async () => {
    const link = await area.link(org.id);
    expect(link).toMatch(new RegExp(`^${area.origin}/sign-in/[A-Za-z0-9_-]{43}$`));
    // A mail or chat link preview fetches it, perhaps twice: no session, and the link still works.
    for (const _preview of [1, 2]) {
      const shown = await fetch(link, { redirect: "manual" });
      expect(shown.status).toBe(200);
      expect(shown.headers.get("set-cookie")).toBeNull();
      // At most the origin as a referrer, never the path with the token (and the POST keeps its Origin).
      expect(shown.headers.get("referrer-policy")).toBe("strict-origin");
      const page = await shown.text();
      expect(page).toContain("Continue to the Developer area of Sign-in Caterers");
      expect(page).toContain(`<form method="post" action="${new URL(link).pathname}">`);
    }
    expect(await rows("select count(*)::int as n from developer_sign_in_links where used_at is not null and token_hash = encode(sha256(?::bytea), 'hex')", [
      link.split("/").pop(),
    ])).toEqual([{ n: 0 }]);
  });

  it("continued (POST) starts a session: an HttpOnly, SameSite=Lax cookie (not Secure over http) and a 303 to the area, with no referrer", async () => {
    const link = await area.link(org.id);
    const response = await useLink(area, link);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/api-keys");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    const setCookie = response.headers.get("set-cookie")!;
    expect(setCookie).toMatch(/^platter_developer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=(2879\d|28800); HttpOnly; SameSite=Lax$/);
    const page = await fetch(`${area.origin}/api-keys`, { headers: { cookie: cookiePair(setCookie) } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Sign-in Caterers");
  });

  it("behind https sets a cookie that works in a frame on another site: __Host-, SameSite=None; Secure; Partitioned", async () => {
    const publicUrl = "https://developers.example.com";
    const app = createDeveloperAreaApp(area.db.runtime, { developerAreaUrl: publicUrl, frameAncestors: "https://app.example.com" }, pino({ level: "silent" }));
    const { server, origin } = await listen(app.callback());
    try {
      const link = (await area.db.run(makeSignInLink(publicUrl, org.id, "application"))).url.replace(publicUrl, origin);
      // Inside the frame, the page's form is sent from the area's own origin.
      const response = await fetch(link, { method: "POST", redirect: "manual", headers: { origin: publicUrl, "sec-fetch-site": "same-origin" } });
      expect(response.status).toBe(303);
      const setCookie = response.headers.get("set-cookie")!;
      expect(setCookie).toMatch(
        /^__Host-platter_developer_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=None; Secure; Partitioned$/,
      );
      // The session's forms inside the frame pass the same checks; the embedding site's own do not.
      const cookie = cookiePair(setCookie);
      const keys = await fetch(`${origin}/api-keys`, { headers: { cookie } });
      expect(keys.status).toBe(200);
      const formToken = formTokenIn(await keys.text());
      const post = (from: string, site: string) =>
        fetch(`${origin}/api-keys`, {
          method: "POST",
          redirect: "manual",
          headers: { cookie, origin: from, "sec-fetch-site": site, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ form_token: formToken, name: "Framed key", access: "read" }).toString(),
        });
      expect((await post("https://app.example.com", "cross-site")).status).toBe(403);
      expect((await post(publicUrl, "same-origin")).status).toBe(201);
      const signedOut = await fetch(`${origin}/sign-out`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: publicUrl, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ form_token: formToken }).toString(),
      });
      expect(signedOut.status).toBe(303);
      expect(signedOut.headers.get("set-cookie")).toBe(
        "__Host-platter_developer_session=; Path=/; Max-Age=0; HttpOnly; SameSite=None; Secure; Partitioned",
      );
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });

  it.each([
    ["another site", { origin: "https://evil.example" }],
    ["another site, said by Sec-Fetch-Site", { "sec-fetch-site": "cross-site" }],
    ["a page with no origin (Origin: null)", { origin: "null" }],
  ])("continued from %s is refused (403): no session, and the link still works", async (_case, headers) => {
    const link = await area.link(org.id);
    const refused = await fetch(link, { method: "POST", redirect: "manual", headers });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await useLink(area, link)).status).toBe(303);
  });

  it("signs out from the header by ending the session, audited as the session's own end", async () => {
    const session = await signIn(area, await area.link(org.id));
    const [row] = await area.db.orm.em.getConnection().execute<Array<{ id: string }>>(
      "select id from developer_sessions where organization_id = ? and ended_at is null order by id desc limit 1", [org.id],
    );
    const signedOut = await postForm(area, "/sign-out", { form_token: session.formToken }, { cookie: session.cookie });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get("location")).toBe("/signed-out");
    expect((await fetch(`${area.origin}/api-keys`, { headers: { cookie: session.cookie }, redirect: "manual" })).status).toBe(401);
    expect(await area.db.orm.em.getConnection().execute(
      "select action, session_id from audit_log where subject = ?", [`developer_session ${row!.id}`],
    )).toEqual([{ action: "developer_session.ended", session_id: row!.id }]);
  });

  it("is not used up by a link checker's HEAD", async () => {
    const link = await area.link(org.id);
    const checked = await fetch(link, { method: "HEAD", redirect: "manual" });
    expect(checked.status).toBe(404);
    expect(checked.headers.get("set-cookie")).toBeNull();
    expect((await useLink(area, link)).status).toBe(303);
  });

  it.each(["GET", "POST"])("used, then opened again (%s), gets a clear page and no session", async (method) => {
    const link = await area.link(org.id);
    expect((await useLink(area, link)).status).toBe(303);
    const again = method === "GET" ? await fetch(link, { redirect: "manual" }) : await useLink(area, link);
    expect(again.status).toBe(410);
    expect(again.headers.get("set-cookie")).toBeNull();
    expect(again.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await again.text()).toContain("This sign-in link was already used");
  });

  it.each(["GET", "POST"])("expired gets a clear page and no session (%s)", async (method) => {
    const link = await area.link(org.id);
    await rows("update developer_sign_in_links set expires_at = now() - interval '1 second' where token_hash = encode(sha256(?::bytea), 'hex')", [
      link.split("/").pop(),
    ]);
    const response = method === "GET" ? await fetch(link, { redirect: "manual" }) : await useLink(area, link);
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
  ])("with %s gets the invalid-link page and no session, on GET and POST", async (_case, path) => {
    for (const method of ["GET", "POST"]) {
      const response = await fetch(area.origin + path, { method, redirect: "manual", headers: method === "POST" ? { origin: area.origin } : {} });
      expect(response.status).toBe(404);
      expect(response.headers.get("set-cookie")).toBeNull();
      const text = await response.text();
      expect(text).not.toContain("<script>alert");
      expect(text).toMatch(/This sign-in link is not valid|Page not found/);
    }
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
