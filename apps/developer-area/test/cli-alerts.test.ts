import { createOrganization, type OrganizationFixture, startTestSmtpServer, type TestSmtpServer } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/config.ts";
import { postForm, type RunningArea, signIn, startArea } from "./developer-area-harness.ts";

/**
 * `/cli/alerts` (`platter alerts`) over HTTP with an API key and a real SMTP server on 127.0.0.1: the
 * organization's alert addresses as the Alerts page keeps them. A read/write key lists, adds (the area
 * mails the confirmation link, audited as the key's) and removes, as every /cli/ route needs; a
 * read-only key (even to list), another organization's address, bad input and an area that sends no
 * mail change and mail nothing.
 */

let area: RunningArea;
let mailless: RunningArea;
let smtp: TestSmtpServer;
let org: OrganizationFixture;
let other: OrganizationFixture;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  area = await startArea(inject("pgAdminUrl"), "'self'", { mailServer: { smtpUrl: smtp.url, from: "alerts@platter.test" } });
  // One add per window: a refused add that did not give its count back would make the next one 429.
  mailless = await startArea(inject("pgAdminUrl"), "'self'", { limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, alertAddresses: 1 } });
  org = await createOrganization(area.db, "CLI Alerts");
  other = await createOrganization(area.db, "Other Alerts");
});
afterAll(async () => {
  await area?.stop();
  await mailless?.stop();
  await smtp?.close();
});

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);

/** One request to `/cli/alerts…` with `key`; states the status expected and returns the JSON answer. */
const call = async (key: string, method: "GET" | "POST", path: string, status: number, body?: unknown, on = area): Promise<Record<string, any>> => {
  const response = await fetch(`${on.origin}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = (await response.json()) as Record<string, any>;
  expect(response.status, JSON.stringify(answer)).toBe(status);
  return answer;
};

describe("/cli/alerts", () => {
  it("adds an address (mailing its link), lists it, and removes it, each change audited as the key's", async () => {
    const added = await call(org.writeKey, "POST", "/cli/alerts", 201, { email: " Dev@CLI.example " });
    expect(added).toEqual({ id: expect.any(Number), email: "dev@cli.example", confirmation_mailed: true });
    expect(smtp.to("dev@cli.example").map((mail) => mail.subject)).toEqual(["Platter: confirm webhook alerts for this address"]);
    expect(smtp.to("dev@cli.example")[0]!.text).toMatch(new RegExp(`${area.origin}/alerts/confirm/[A-Za-z0-9_-]{43}`));

    const listed = await call(org.writeKey, "GET", "/cli/alerts", 200);
    expect(listed["recipients"]).toMatchObject([{ id: added["id"], email: "dev@cli.example", confirmed_at: null, link_expired: false }]);
    expect((await call(other.writeKey, "GET", "/cli/alerts", 200))["recipients"]).toEqual([]);

    expect(await call(org.writeKey, "POST", `/cli/alerts/${added["id"]}/remove`, 200)).toEqual({ id: added["id"], email: "dev@cli.example", removed: true });
    expect((await call(org.writeKey, "GET", "/cli/alerts", 200))["recipients"]).toEqual([]);
    expect(await rows("select action, subject from audit_log where organization_id = ? and action like 'alert_recipient.%' order by id", [org.id])).toEqual([
      { action: "alert_recipient.added", subject: `alert_recipient ${added["id"]}` },
      { action: "alert_recipient.removed", subject: `alert_recipient ${added["id"]}` },
    ]);
  });

  it.each<[string, (keys: { read: string; otherWrite: string; write: string }, kept: number) => [string, "GET" | "POST", string, unknown], number, string]>([
    ["a read-only key's list", (k) => [k.read, "GET", "/cli/alerts", undefined], 403, "This API key is read-only"],
    ["a read-only key's add", (k) => [k.read, "POST", "/cli/alerts", { email: "ro@cli.example" }], 403, ""],
    ["a read-only key's removal", (k, kept) => [k.read, "POST", `/cli/alerts/${kept}/remove`, undefined], 403, ""],
    ["another organization's removal", (k, kept) => [k.otherWrite, "POST", `/cli/alerts/${kept}/remove`, undefined], 404, ""],
    ["no email", (k) => [k.write, "POST", "/cli/alerts", {}], 400, "email is required"],
    ["an email that is not a string", (k) => [k.write, "POST", "/cli/alerts", { email: 7 }], 400, "email must be a string"],
    ["an email that is not an address", (k) => [k.write, "POST", "/cli/alerts", { email: "not an address" }], 400, "email must be an address like dev@example.com"],
    ["no key", () => ["", "GET", "/cli/alerts", undefined], 401, ""],
  ])("refuses %s and changes and mails nothing", async (_what, request, status, text) => {
    const kept = (await call(org.writeKey, "POST", "/cli/alerts", 201, { email: "kept@cli.example" }))["id"] as number;
    const mailed = smtp.received.length;
    const [key, method, path, body] = request({ read: org.readKey, otherWrite: other.writeKey, write: org.writeKey }, kept);
    const refused = await call(key, method, path, status, body);
    expect(refused["error"]).toContain(text);
    expect(await rows("select email from alert_recipients where organization_id = ?", [org.id])).toEqual([{ email: "kept@cli.example" }]);
    expect(smtp.received).toHaveLength(mailed);
    await call(org.writeKey, "POST", `/cli/alerts/${kept}/remove`, 200);
  });

  it("refuses an add where this Platter sends no e-mail as the catalogue's 'mail not configured' (503, no Retry-After: waiting changes nothing), writing nothing and giving its count back", async () => {
    const mine = await createOrganization(mailless.db, "No Mail");
    for (let add = 0; add < 2; add++) {
      const response = await fetch(`${mailless.origin}/cli/alerts`, {
        method: "POST",
        headers: { authorization: `Bearer ${mine.writeKey}`, "content-type": "application/json" },
        body: JSON.stringify({ email: "dev@nomail.example" }),
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBeNull();
      expect(await response.json()).toEqual({ error: "This Platter sends no e-mail: ask your Platter contact to set SMTP_URL." });
    }
    // The Alerts page's form answers the same status, its text beside the field, and gives its count back too.
    const session = await signIn(mailless, await mailless.link(mine.id));
    for (let add = 0; add < 2; add++) {
      const page = await postForm(mailless, "/alerts", { form_token: session.formToken, email: "dev@nomail.example" }, { cookie: session.cookie });
      expect(page.status).toBe(503);
      expect(await page.text()).toContain("This Platter sends no e-mail: ask your Platter contact to set SMTP_URL.");
    }
    expect((await call(mine.writeKey, "GET", "/cli/alerts", 200, undefined, mailless))["recipients"]).toEqual([]);
  });
});
