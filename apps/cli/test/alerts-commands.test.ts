import { createServer, type Server } from "node:http";
import { createDeveloperAreaApp } from "@platter/developer-area";
import { createOrganization, createTestDatabase, freePort, type OrganizationFixture, startTestSmtpServer, type TestDatabase, type TestSmtpServer } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/**
 * `platter alerts list|add|remove` end to end: the CLI as a process with an API key (no database)
 * against the real Developer area on 127.0.0.1, which mails confirmation links to a real SMTP server.
 */

const UNREADABLE_DATABASE = "not-a-database-url";

let db: TestDatabase;
let org: OrganizationFixture;
let area: Server;
/** The same area without SMTP_URL: it sends no e-mail. */
let mailless: Server;
let maillessOrigin: string;
let smtp: TestSmtpServer;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  smtp = await startTestSmtpServer();
  org = await createOrganization(db, "Alerting Kitchen");
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const app = createDeveloperAreaApp(db.runtime, {
    developerAreaUrl: origin, frameAncestors: "'self'", mailServer: { smtpUrl: smtp.url, from: "alerts@platter.test" },
  }, pino({ level: "silent" }));
  area = createServer(app.callback());
  await new Promise<void>((done) => area.listen(port, "127.0.0.1", done));
  env = { DATABASE_URL: UNREADABLE_DATABASE, PLATTER_API_KEY: org.writeKey, PLATTER_DEVELOPER_AREA_URL: origin };
  const maillessPort = await freePort();
  maillessOrigin = `http://127.0.0.1:${maillessPort}`;
  mailless = createServer(createDeveloperAreaApp(db.runtime, { developerAreaUrl: maillessOrigin, frameAncestors: "'self'" }, pino({ level: "silent" })).callback());
  await new Promise<void>((done) => mailless.listen(maillessPort, "127.0.0.1", done));
});

afterAll(async () => {
  area?.closeAllConnections();
  await new Promise((done) => area?.close(done));
  mailless?.closeAllConnections();
  await new Promise((done) => mailless?.close(done));
  await smtp?.close();
  await db?.dispose();
});

describe("platter alerts", () => {
  it("adds an address (its confirmation link mailed), lists it waiting for the link, and removes it", async () => {
    const added = await runCliJson(["alerts", "add", "--email", "dev@alerting.example"], env);
    expect(added).toEqual({ id: expect.any(Number), email: "dev@alerting.example", confirmation_mailed: true });
    expect(smtp.to("dev@alerting.example")).toHaveLength(1);

    const listed = await runCli(["alerts", "list"], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${added.id}\\tdev@alerting\\.example\\twaiting for its link until \\d{4}-`));

    expect(await runCliJson(["alerts", "remove", String(added.id)], env)).toEqual({ id: added.id, email: "dev@alerting.example", removed: true });
    expect((await runCliJson(["alerts", "list"], env)).recipients).toEqual([]);
  }, 120_000); // four CLI processes, each about 2.5 s of CPU to start

  it("is refused with a read-only key (exit 1), adding and mailing nothing", async () => {
    const refused = await runCliFailing(["alerts", "add", "--email", "ro@alerting.example", "--api-key", org.readKey], env);
    expect(refused.code).toBe(1);
    expect(smtp.to("ro@alerting.example")).toEqual([]);
  });

  it("lists only with a read/write key, as every key command (a read-only key: exit 1)", async () => {
    const refused = await runCliFailing(["alerts", "list", "--api-key", org.readKey], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("This API key is read-only");
  });

  it("says the area sends no e-mail (exit 1), not that the area cannot be reached, where SMTP_URL is not set", async () => {
    const refused = await runCliFailing(["alerts", "add", "--email", "dev@nomail.example"], { ...env, PLATTER_DEVELOPER_AREA_URL: maillessOrigin });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("This Platter sends no e-mail: ask your Platter contact to set SMTP_URL.");
    expect(refused.stderr).not.toContain("cannot reach");
  });
});
