import { ApiKeys } from "@platter/application";
import { operatorActor } from "@platter/domain";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cookiePair, formTokenIn, postForm, type RunningArea, startArea, type TestSession, useLink } from "./developer-area-harness.ts";

/**
 * The Sessions and Audit log pages over HTTP: a session is listed with the device hint derived at
 * sign-in (the User-Agent itself is never stored), ending one or all the others signs them out at
 * their next request and is audited `developer_session.ended`, another organization's session is
 * the 404 page and stays live, ending this browser's own is signing out. The audit log pages
 * newest first, filtered, and refuses a filter it cannot read with a 400 naming the field.
 */

const CHROME_LINUX = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 marker-7f3a";
const SAFARI_IOS = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
const FIREFOX_WINDOWS = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";

let area: RunningArea;
let org: OrganizationFixture;
let other: OrganizationFixture;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Session Kitchen");
  other = await createOrganization(area.db, "Other Kitchen");
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);

/** A session of `of` signed in from a browser sending `userAgent`; its id from the database. */
const signInAs = async (of: OrganizationFixture, userAgent: string): Promise<TestSession & { id: number }> => {
  const opened = await useLink(area, await area.link(of.id), { "user-agent": userAgent });
  expect(opened.status).toBe(303);
  const cookie = cookiePair(opened.headers.get("set-cookie")!);
  const keys = await fetch(`${area.origin}/api-keys`, { headers: { cookie } });
  expect(keys.status).toBe(200);
  const [row] = await rows<{ id: string }>("select id from developer_sessions where organization_id = ? order by id desc limit 1", [of.id]);
  return { cookie, formToken: formTokenIn(await keys.text()), id: Number(row!.id) };
};

const get = (session: TestSession, path: string) => fetch(area.origin + path, { redirect: "manual", headers: { cookie: session.cookie } });
const post = (session: TestSession, path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: session.formToken, ...fields }, { cookie: session.cookie });
const statusOf = async (session: TestSession) => (await get(session, "/api-keys")).status;
const endedAudit = () =>
  rows<{ subject: string; session_id: string | null }>("select subject, session_id from audit_log where action = 'developer_session.ended' order by id");

describe("the Sessions page", () => {
  it("lists the organization's sessions by device, marks this browser, and keeps only the hint of the User-Agent", async () => {
    const mine = await signInAs(org, CHROME_LINUX);
    const phone = await signInAs(org, SAFARI_IOS);
    const theirs = await signInAs(other, FIREFOX_WINDOWS);
    const response = await get(mine, "/sessions");
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<a href="/sessions" aria-current="page">Sessions</a>');
    expect(page).toContain("Chrome on Linux <span class=\"badge badge-active\">This browser</span>");
    expect(page).toContain("Safari on iOS");
    expect(page).not.toContain("Firefox on Windows");
    expect(page).toContain(`action="/sessions/${phone.id}/end"`);
    expect(page).not.toContain(`action="/sessions/${theirs.id}/end"`);
    expect(page).toContain("End all other sessions");
    const stored = await rows<{ device_hint: string }>("select device_hint from developer_sessions where id in (?, ?) order by id", [mine.id, phone.id]);
    expect(stored).toEqual([{ device_hint: "Chrome on Linux" }, { device_hint: "Safari on iOS" }]);
    const dump = JSON.stringify(await rows("select to_jsonb(s) as s from developer_sessions s"));
    expect(dump).not.toContain("marker-7f3a");
    expect(dump).not.toContain("Mozilla");
  });

  it("ends another session: audited, and its next request is the sign-in page", async () => {
    const mine = await signInAs(org, CHROME_LINUX);
    const leaked = await signInAs(org, FIREFOX_WINDOWS);
    const ended = await post(mine, `/sessions/${leaked.id}/end`);
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toBe("/sessions?ended=1");
    expect(await statusOf(leaked)).toBe(401);
    expect(await statusOf(mine)).toBe(200);
    expect((await endedAudit()).at(-1)).toEqual({ subject: `developer_session ${leaked.id}`, session_id: String(mine.id) });
    const shown = await get(mine, "/sessions?ended=1");
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain("1 session was ended: its next page asks to sign in again.");
    // Ending it again (an old page): nothing changes, nothing is recorded.
    const audit = (await endedAudit()).length;
    const again = await post(mine, `/sessions/${leaked.id}/end`);
    expect(again.status).toBe(303);
    expect(again.headers.get("location")).toBe("/sessions?ended=0");
    expect(await endedAudit()).toHaveLength(audit);
  });

  it("ends all the other sessions, one audit row each; this browser stays signed in", async () => {
    const mine = await signInAs(org, CHROME_LINUX);
    const others = [await signInAs(org, SAFARI_IOS), await signInAs(org, FIREFOX_WINDOWS)];
    const theirs = await signInAs(other, FIREFOX_WINDOWS);
    const before = (await endedAudit()).length;
    const ended = await post(mine, "/sessions/end-others");
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toMatch(/^\/sessions\?ended=\d+$/);
    for (const session of others) expect(await statusOf(session)).toBe(401);
    expect(await statusOf(mine)).toBe(200);
    expect(await statusOf(theirs)).toBe(200);
    const rowsNow = (await endedAudit()).slice(before);
    expect(rowsNow.map((row) => row.subject)).toEqual(expect.arrayContaining(others.map((session) => `developer_session ${session.id}`)));
    expect(rowsNow.every((row) => row.session_id === String(mine.id))).toBe(true);
    const page = await (await get(mine, "/sessions")).text();
    expect(page).toContain("No other session is signed in.");
    expect(page).not.toContain("End all other sessions");
  });

  it("ending this browser's own session signs it out", async () => {
    const mine = await signInAs(org, CHROME_LINUX);
    const ended = await post(mine, `/sessions/${mine.id}/end`);
    expect(ended.status).toBe(303);
    expect(ended.headers.get("location")).toBe("/signed-out");
    expect(ended.headers.get("set-cookie")).toMatch(/^platter_developer_session=; Path=\/; Max-Age=0;/);
    expect(await statusOf(mine)).toBe(401);
    expect((await endedAudit()).at(-1)).toEqual({ subject: `developer_session ${mine.id}`, session_id: String(mine.id) });
  });

  it("never ends another organization's session: the 404 page, and nothing changes", async () => {
    const mine = await signInAs(org, CHROME_LINUX);
    const theirs = await signInAs(other, FIREFOX_WINDOWS);
    const audit = await rows("select count(*)::int as n from audit_log");
    const refused = await post(mine, `/sessions/${theirs.id}/end`);
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain("Page not found");
    expect(await statusOf(theirs)).toBe(200);
    expect(await rows("select count(*)::int as n from audit_log")).toEqual(audit);
  });

  it.each([
    ["without the form token", (session: TestSession & { id: number }, target: number) => postForm(area, `/sessions/${target}/end`, {}, { cookie: session.cookie }), 403],
    ["from another origin", (session: TestSession & { id: number }, target: number) =>
      postForm(area, `/sessions/${target}/end`, { form_token: session.formToken }, { cookie: session.cookie, origin: "https://evil.example" }), 403],
    ["at a path that names no session", (session: TestSession & { id: number }) => post(session, "/sessions/abc/end"), 404],
    ["ending all without the form token", (session: TestSession & { id: number }) => postForm(area, "/sessions/end-others", {}, { cookie: session.cookie }), 403],
  ])("refuses a form %s and ends nothing", async (_case, send, status) => {
    const mine = await signInAs(org, CHROME_LINUX);
    const target = await signInAs(org, SAFARI_IOS);
    const audit = await rows("select count(*)::int as n from audit_log");
    expect((await send(mine, target.id)).status).toBe(status);
    expect(await statusOf(target)).toBe(200);
    expect(await rows("select count(*)::int as n from audit_log")).toEqual(audit);
  });

  it("asks a browser without a session to sign in", async () => {
    expect((await fetch(`${area.origin}/sessions`)).status).toBe(401);
    expect((await fetch(`${area.origin}/audit-log`)).status).toBe(401);
  });
});

describe("the Audit log page", () => {
  let logOrg: OrganizationFixture;
  let reader: TestSession & { id: number };
  beforeAll(async () => {
    logOrg = await createOrganization(area.db, "Logged Kitchen");
    reader = await signInAs(logOrg, CHROME_LINUX);
    // 55 keys made by the operator (a name with markup), then one in the session: more than a page.
    const operator = operatorActor(logOrg.scope, "<b>root</b> via the CLI");
    for (let index = 0; index < 55; index += 1) await area.db.run(ApiKeys.create(operator, "read"));
    expect((await post(reader, "/api-keys", { name: "Session key", access: "read" })).status).toBe(201);
  });

  it("shows the newest entries first with who did them, escaped, and pages to older ones", async () => {
    const response = await get(reader, "/audit-log");
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<a href="/audit-log" aria-current="page">Audit log</a>');
    const subjects = [...page.matchAll(/<td>(api_key \d+)<\/td>/g)].map((match) => match[1]);
    expect(subjects).toHaveLength(50);
    expect(page.indexOf("Chrome on Linux")).toBeLessThan(page.indexOf("&lt;b&gt;root&lt;/b&gt; via the CLI"));
    expect(page).not.toContain("<b>root</b>");
    const older = /href="(\/audit-log\?cursor=[^"]+)"/.exec(page)?.[1];
    expect(older).toBeDefined();
    const next = await get(reader, older!.replaceAll("&amp;", "&"));
    expect(next.status).toBe(200);
    const nextPage = await next.text();
    const nextSubjects = [...nextPage.matchAll(/<td>(api_key \d+)<\/td>/g)].map((match) => match[1]);
    expect(nextSubjects).toHaveLength(6);
    expect(new Set([...subjects, ...nextSubjects]).size).toBe(56);
    expect(nextPage).not.toContain('rel="next"');
    expect(nextPage).toContain(">Newest</a>");
  });

  it.each([
    ["action", "action=api_key.created", 50, true],
    ["actor: sessions", "actor=session", 1, false],
    ["actor: the operator", "actor=operator", 50, true],
    ["a day range including today", `from=2020-01-01&to=${new Date().toISOString().slice(0, 10)}`, 50, true],
    ["a day range before anything happened", "from=2020-01-01&to=2020-01-31", 0, false],
  ])("filters by %s", async (_case, query, count, more) => {
    const response = await get(reader, `/audit-log?${query}`);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect([...page.matchAll(/<td>(api_key \d+)<\/td>/g)]).toHaveLength(count);
    expect(page.includes('rel="next"')).toBe(more);
    expect(page.includes("No entries match.")).toBe(count === 0);
  });

  it("offers the actions the log holds as choices", async () => {
    const page = await (await get(reader, "/audit-log")).text();
    expect([...page.matchAll(/<option value="([a-z_.]+)"/g)].map((match) => match[1])).toEqual(["api_key.created", "session", "operator", "api_key"]);
  });

  it.each([
    ["an action the log does not hold", "action=webhook_endpoint.added", "action must be one of the actions in the log"],
    ["a malformed action", "action=%3Cscript%3E", "action must be one of the actions in the log"],
    ["an unknown actor", "actor=robot", "actor must be session, operator or api_key"],
    ["a day that does not exist", "from=2026-02-30", "from must be a date written YYYY-MM-DD"],
    ["a time instead of a day", "to=2026-11-24T10:00", "to must be a date written YYYY-MM-DD"],
    ["to before from", "from=2026-11-24&to=2026-11-01", "to must not be before from"],
    ["a cursor that is not one", "cursor=not-a-cursor", "This page link is not valid: start again from the newest entries."],
  ])("refuses %s with a 400 naming the field, listing nothing", async (_case, query, message) => {
    const response = await get(reader, `/audit-log?${query}`);
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(`<p class="field-error" role="alert">${message}</p>`);
    expect(page).toContain("Correct the filter above to see the log.");
    expect(page).not.toMatch(/<td>api_key \d+<\/td>/);
    expect(page).not.toContain("<script>");
  });
});
