import type { Server } from "node:http";
import { createServer } from "node:http";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { createOrganization, createTestDatabase, freePort, type OrganizationFixture, type TestDatabase } from "@platter/persistence/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/** `platter developer-area link` as a real process: the printed link signs in to that organization's Developer area, once. */

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
