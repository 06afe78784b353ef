import type { Server } from "node:http";
import { createServer } from "node:http";
import { makeSignInLink } from "@platter/application";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { createOrganization, createTestDatabase, freePort, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * `platter developer-area link` as a real process: the printed link signs in to that organization's
 * Developer area, once. `sessions` lists the organization's live sessions, and `end-sessions` ends
 * them (all, or one), audited as the operator: an ended session's next page is the sign-in page.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let area: Server;
let origin: string;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Linked Caterers");
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  area = createServer(createDeveloperAreaApp(db.runtime, { developerAreaUrl: origin, frameAncestors: "'self'" }, pino({ level: "silent" })).callback());
  await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));
  env = { DATABASE_URL: db.url, DEVELOPER_AREA_PUBLIC_URL: origin };
});
afterAll(async () => {
  area?.closeAllConnections();
  await new Promise((done) => area?.close(done));
  await db?.dispose();
});

describe("platter developer-area link", () => {
  it("prints {\"url\": …} with --json; the link signs in to the organization's area once", async () => {
    const printed = await runCliJson(["developer-area", "link", "--org", String(org.id)], env);
    expect(printed).toEqual({ url: expect.stringMatching(new RegExp(`^${origin}/sign-in/[A-Za-z0-9_-]{43}$`)) });
    // Opening it shows a page; its "Continue" button (a POST from the area's origin) signs in.
    expect((await fetch(printed.url, { redirect: "manual" })).status).toBe(200);
    const first = await fetch(printed.url, { method: "POST", redirect: "manual", headers: { origin } });
    expect(first.status).toBe(303);
    const page = await fetch(`${origin}/api-keys`, { headers: { cookie: first.headers.get("set-cookie")!.split(";")[0]! } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Linked Caterers");
    expect((await fetch(printed.url, { redirect: "manual" })).status).toBe(410);
    const [link] = await db.orm.em.getConnection().execute<{ requested_by: string }[]>(
      "select requested_by from developer_sign_in_links where organization_id = ?", [org.id],
    );
    expect(link).toEqual({ requested_by: "cli" });
  });

  it("prints the link in a sentence without --json, at the default address when none is set", async () => {
    const result = await runCli(["developer-area", "link", "--org", String(org.id)], { DATABASE_URL: db.url, DEVELOPER_AREA_PORT: "4123" });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(`^sign-in link to the Developer area of organization ${org.id} \\(works once, until \\S+Z\\):\\n\\n {2}http://localhost:4123/sign-in/[A-Za-z0-9_-]{43}\\n$`),
    );
  });

  it.each([
    ["an unknown organization", ["--org", "987654321"], {}, 1, "platter: organization 987654321 does not exist"],
    ["a malformed id", ["--org", "abc"], {}, 2, 'platter: --org must be a positive integer, got "abc"'],
    ["a public URL with a path", ["--org", "1"], { DEVELOPER_AREA_PUBLIC_URL: "https://example.com/developers" }, 2, "DEVELOPER_AREA_PUBLIC_URL must be an http(s) address without a path"],
  ])("fails on %s, printing nothing on stdout", async (_case, args, extra, code, message) => {
    const result = await runCliFailing(["developer-area", "link", ...args], { ...env, ...extra });
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
  });
});

/**
 * Signs in with a new link of `organizationId` from a browser sending `userAgent`: the session's
 * cookie. The link is made in this process by the use case `platter developer-area link` calls (that
 * command is tested above): a `platter` process costs seconds of CPU to start.
 */
const signedIn = async (organizationId: number, userAgent: string): Promise<string> => {
  const { url } = await db.run(makeSignInLink(origin, organizationId, "cli"));
  const opened = await fetch(url, { method: "POST", redirect: "manual", headers: { origin, "user-agent": userAgent } });
  expect(opened.status).toBe(303);
  return opened.headers.get("set-cookie")!.split(";")[0]!;
};
const pageStatus = async (cookie: string) => (await fetch(`${origin}/api-keys`, { headers: { cookie } })).status;
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const SAFARI = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";

/**
 * How long a test may take per `platter` process it runs: each loads the whole CLI from source (about
 * 2.5 s of CPU), which took up to 8 s on a 2-core machine at a load of 12, so a test running six in a
 * row outgrew the default 60 s there while passing alone.
 */
const PER_CLI_RUN_MS = 15_000;

describe("platter developer-area sessions and end-sessions", () => {
  it("lists the live sessions, ends one, then all, each audited as the operator", async () => {
    const sessionsOrg = await createOrganization(db, "Session Caterers");
    const laptop = await signedIn(sessionsOrg.id, FIREFOX);
    const phone = await signedIn(sessionsOrg.id, SAFARI);
    const listed = await runCliJson(["developer-area", "sessions", "--org", String(sessionsOrg.id)], env);
    expect(listed.sessions.map((session: { device_hint: string }) => session.device_hint).sort()).toEqual(["Firefox on Linux", "Safari on iOS"]);
    const human = await runCli(["developer-area", "sessions", "--org", String(sessionsOrg.id)], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^session \d+: Safari on iOS, started \S+Z, last seen \S+Z, ends \S+Z\nsession \d+: Firefox on Linux, /);

    const phoneId = listed.sessions.find((session: { device_hint: string }) => session.device_hint === "Safari on iOS").id as number;
    expect(await runCliJson(["developer-area", "end-sessions", "--org", String(sessionsOrg.id), "--session", String(phoneId)], env)).toEqual({ ended: [phoneId] });
    expect(await pageStatus(phone)).toBe(401);
    expect(await pageStatus(laptop)).toBe(200);

    const all = await runCli(["developer-area", "end-sessions", "--org", String(sessionsOrg.id)], env);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^ended session \d+ of organization \d+: their next page asks to sign in again\n$/);
    expect(await pageStatus(laptop)).toBe(401);
    expect(await runCliJson(["developer-area", "sessions", "--org", String(sessionsOrg.id)], env)).toEqual({ sessions: [] });
    expect(await runCliJson(["developer-area", "end-sessions", "--org", String(sessionsOrg.id)], env)).toEqual({ ended: [] });

    const audit = await db.orm.em.getConnection().execute<{ action: string; operator: string; session_id: string | null }[]>(
      "select action, operator, session_id from audit_log where organization_id = ? order by id", [sessionsOrg.id],
    );
    expect(audit).toEqual([
      { action: "developer_session.ended", operator: expect.stringMatching(/ via the CLI$/), session_id: null },
      { action: "developer_session.ended", operator: expect.stringMatching(/ via the CLI$/), session_id: null },
    ]);
  }, 6 * PER_CLI_RUN_MS);

  it("never ends another organization's session", async () => {
    const mine = await createOrganization(db, "Mine Caterers");
    const theirs = await createOrganization(db, "Theirs Caterers");
    const cookie = await signedIn(theirs.id, FIREFOX);
    const [{ id }] = (await runCliJson(["developer-area", "sessions", "--org", String(theirs.id)], env)).sessions;
    const refused = await runCliFailing(["developer-area", "end-sessions", "--org", String(mine.id), "--session", String(id)], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`platter: session ${id} of organization ${mine.id} does not exist`);
    expect(await pageStatus(cookie)).toBe(200);
  });

  it.each([
    ["sessions of an unknown organization", ["sessions", "--org", "987654321"], 1, "platter: organization 987654321 does not exist"],
    ["ending the sessions of an unknown organization", ["end-sessions", "--org", "987654321"], 1, "platter: organization 987654321 does not exist"],
    ["a malformed session id", ["end-sessions", "--org", "1", "--session", "x"], 2, 'platter: --session must be a positive integer, got "x"'],
  ])("fails on %s, printing nothing on stdout", async (_case, args, code, message) => {
    const result = await runCliFailing(["developer-area", ...args], env);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe("");
  });
});
