import { makeSignInLink } from "@platter/application";
import { Writable } from "node:stream";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDeveloperAreaApp } from "../src/index.ts";
import { loggedError, redactTokens } from "../src/log-redaction.ts";
import { listen } from "./developer-area-harness.ts";

/**
 * No log line carries a sign-in link's token. An unexpected error on a sign-in path (forced for
 * real: the links' table is renamed away, so the lookup fails with a defect, not an outage) is
 * logged with the path's token redacted, and the whole log output never contains the token.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let logged = "";
let area: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Redaction Caterers");
  const sink = new Writable({ write: (chunk, _encoding, done) => ((logged += String(chunk)), done()) });
  area = await listen(createDeveloperAreaApp(db.runtime, { developerAreaUrl: "http://127.0.0.1", frameAncestors: "'self'" }, pino({ level: "info" }, sink)).callback());
});
afterAll(async () => {
  area?.server.closeAllConnections();
  await new Promise((done) => area?.server.close(done));
  await db?.dispose();
});

const execute = (statement: string) => db.orm.em.getConnection().execute(statement);

describe("an unexpected error on a sign-in path", () => {
  it("is logged with the path's token redacted, and the token appears nowhere in the log", async () => {
    const link = (await db.run(makeSignInLink("http://127.0.0.1", org.id, "cli"))).url;
    const token = link.split("/").pop()!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    logged = "";
    await execute("alter table developer_sign_in_links rename to developer_sign_in_links_away");
    try {
      const shown = await fetch(`${area.origin}/sign-in/${token}`, { redirect: "manual" });
      expect(shown.status).toBe(500);
      expect(await shown.text()).toContain("Something went wrong");
      const used = await fetch(`${area.origin}/sign-in/${token}`, { method: "POST", redirect: "manual", headers: { origin: "http://127.0.0.1" } });
      expect(used.status).toBe(500);
    } finally {
      await execute("alter table developer_sign_in_links_away rename to developer_sign_in_links");
    }
    const lines = logged.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line["msg"], line["method"], line["path"]])).toEqual([
      ["unhandled error", "GET", "/sign-in/[redacted]"],
      ["unhandled error", "POST", "/sign-in/[redacted]"],
    ]);
    // The error itself is still there to debug with.
    expect((lines[0]!["err"] as { message: string }).message).toMatch(/developer_sign_in_links/);
    expect(logged).not.toContain(token);
    // The link still works once the table is back: logging it did not use it up.
    expect((await fetch(link.replace("http://127.0.0.1", area.origin), { redirect: "manual" })).status).toBe(200);
  });
});

describe("redaction", () => {
  const TOKEN = "Vx3_q9-abcdefghijklmnopqrstuvwxyz0123456789A";

  it.each([
    ["a path", `/sign-in/${TOKEN}`, "/sign-in/[redacted]"],
    ["a full link in a message", `could not open http://area.example.com/sign-in/${TOKEN}?x=1 today`, "could not open http://area.example.com/sign-in/[redacted]?x=1 today"],
    ["a quoted path", `GET "/sign-in/${TOKEN}" failed`, `GET "/sign-in/[redacted]" failed`],
    ["a path without a token", "/webhooks/12", "/webhooks/12"],
  ])("replaces the token in %s", (_, text, expected) => {
    expect(redactTokens(text)).toBe(expected);
  });

  it("removes the request's token from an error's message and stack wherever it appears", () => {
    const error = new Error(`lookup of ${TOKEN} failed`);
    const shown = loggedError(error, { path: "/sign-in/x", params: { token: TOKEN } });
    expect(shown.message).toBe("lookup of [redacted] failed");
    expect(shown.stack).toMatch(/^Error: lookup of \[redacted\] failed/);
    expect(JSON.stringify(shown)).not.toContain(TOKEN);
  });
});
