import { type AddressInfo, createServer, type Socket } from "node:net";
import { createOrganization, type OrganizationFixture, startTestSmtpServer, type TestSmtpServer } from "@platter/testing";
import type { ParsedMail } from "mailparser";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEFAULT_DEVELOPER_AREA_LIMITS } from "../src/config.ts";
import { postForm, type RunningArea, signIn, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Alerts page over HTTP with a real SMTP server on 127.0.0.1 (`smtp-server`, read by
 * `mailparser`): an address added is mailed a confirmation link and nothing else; opening the link
 * shows a button and confirms nothing (a link scanner's GET), the button confirms it once; bad input
 * and the cap write and mail nothing; and the adds, each a mail, are counted against the
 * organization's limit, so removing and adding again cannot make Platter mail without bound.
 */

const CAP = 3;
const ADDS_PER_WINDOW = 4;

let area: RunningArea;
let smtp: TestSmtpServer;
let org: OrganizationFixture;
let other: OrganizationFixture;
let session: TestSession;
let otherSession: TestSession;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    alertRecipientsPerOrganization: CAP,
    limits: { ...DEFAULT_DEVELOPER_AREA_LIMITS, alertAddresses: ADDS_PER_WINDOW },
    mailServer: { smtpUrl: smtp.url, from: "alerts@platter.test" },
  });
  org = await createOrganization(area.db, "Alert Kitchen");
  other = await createOrganization(area.db, "Other Kitchen");
  session = await signIn(area, await area.link(org.id));
  otherSession = await signIn(area, await area.link(other.id));
});
afterAll(async () => {
  await area?.stop();
  await smtp?.close();
});

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const post = (as: TestSession, path: string, fields: Record<string, string> = {}) =>
  postForm(area, path, { form_token: as.formToken, ...fields }, { cookie: as.cookie });
const recipients = (of: OrganizationFixture) =>
  rows<{ id: number; email: string; confirmed: boolean }>(
    "select id::int, email, confirmed_at is not null as confirmed from alert_recipients where organization_id = ? order by id", [of.id]);
const linkIn = (mail: ParsedMail) => {
  const match = new RegExp(`${area.origin}/alerts/confirm/[A-Za-z0-9_-]{43}`).exec(mail.text ?? "");
  expect(match).not.toBeNull();
  return match![0];
};

describe("alert addresses", () => {
  it("mails a confirmation link; opening it confirms nothing, its button confirms the address once", async () => {
    const added = await post(session, "/alerts", { email: "  Dev@Kitchen.example " });
    expect(added.status).toBe(303);
    const shown = await fetch(area.origin + added.headers.get("location")!, { headers: { cookie: session.cookie } });
    expect(shown.status).toBe(200);
    expect(await shown.text()).toContain("A confirmation link was mailed to dev@kitchen.example");
    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.subject).toBe("Platter: confirm webhook alerts for this address");
    expect(mail.to !== undefined && !Array.isArray(mail.to) && mail.to.text).toBe("dev@kitchen.example");
    const link = linkIn(mail);
    const listed = await fetch(`${area.origin}/alerts`, { headers: { cookie: session.cookie } });
    expect(listed.status).toBe(200);
    expect(await listed.text()).toContain("Waiting for confirmation");

    const opened = await fetch(link, { redirect: "manual" });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain("Receive webhook alerts at this address?");
    expect(await recipients(org)).toEqual([{ id: expect.any(Number), email: "dev@kitchen.example", confirmed: false }]);

    const confirmed = await fetch(link, { method: "POST", redirect: "manual", headers: { origin: area.origin } });
    expect(confirmed.status).toBe(200);
    expect(await confirmed.text()).toContain("dev@kitchen.example now receives your organization's webhook alerts");
    expect(await recipients(org)).toEqual([{ id: expect.any(Number), email: "dev@kitchen.example", confirmed: true }]);
    const again = await fetch(link, { method: "POST", redirect: "manual", headers: { origin: area.origin } });
    expect(again.status).toBe(404);
    // From another site, the button is refused before anything is looked up.
    const forged = await fetch(link, { method: "POST", redirect: "manual", headers: { origin: "https://evil.example" } });
    expect(forged.status).toBe(403);
    expect((await rows<{ action: string }>("select action from audit_log where organization_id = ? and action like 'alert_recipient.%'", [org.id]))
      .map((row) => row.action)).toEqual(["alert_recipient.added"]);
  });

  it.each([
    ["empty", "", "Give an e-mail address"],
    ["no domain", "dev@", "email must be an address like dev@example.com"],
    ["no dot in the domain", "dev@kitchen", "email must be an address like dev@example.com"],
    ["a display name", "Dev <dev@kitchen.example>", "email must be an address like dev@example.com"],
    ["a header injection", "dev@kitchen.example\r\nBcc: victim@elsewhere.example", "email must be an address like dev@example.com"],
    ["too long", `${"a".repeat(250)}@kitchen.example`, "An e-mail address may be at most 254 characters"],
    ["already listed", "dev@kitchen.example", "This address is already listed"],
  ])("refuses %s with 400 beside the field, writing and mailing nothing", async (_name, email, text) => {
    const before = smtp.received.length;
    const refused = await post(session, "/alerts", { email });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain(`<p class="field-error" id="alert-email-error">${text}</p>`);
    expect((await recipients(org)).map((row) => row.email)).toEqual(["dev@kitchen.example"]);
    expect(smtp.received.length).toBe(before);
  });

  it("refuses an address past ALERT_RECIPIENTS_PER_ORGANIZATION with 409, mailing nothing", async () => {
    for (const email of ["two@kitchen.example", "three@kitchen.example"]) expect((await post(session, "/alerts", { email })).status).toBe(303);
    const before = smtp.received.length;
    const refused = await post(session, "/alerts", { email: "four@kitchen.example" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("This organization already alerts 3 e-mail addresses, the most it may");
    expect(smtp.received.length).toBe(before);
    expect(await recipients(org)).toHaveLength(CAP);
  });

  it("counts every add, a mail each, against DEVELOPER_AREA_ALERT_ADDRESSES: removing and adding again cannot mail without bound", async () => {
    // Three adds so far counted (the refusals gave theirs back); one more fits the window, then 429.
    const [, two] = await recipients(org);
    expect((await post(session, `/alerts/${two!.id}/remove`)).status).toBe(303);
    expect((await post(session, "/alerts", { email: "two@kitchen.example" })).status).toBe(303);
    const removeAgain = (await recipients(org)).find((row) => row.email === "two@kitchen.example")!;
    expect((await post(session, `/alerts/${removeAgain.id}/remove`)).status).toBe(303);
    const before = smtp.received.length;
    const limited = await post(session, "/alerts", { email: "two@kitchen.example" });
    expect(limited.status).toBe(429);
    expect(smtp.received.length).toBe(before);
    expect(smtp.received).toHaveLength(ADDS_PER_WINDOW);
    // Another organization has its own allowance.
    expect((await post(otherSession, "/alerts", { email: "dev@other.example" })).status).toBe(303);
  });

  it("keeps organizations apart: another organization's address is the 404 page and stays", async () => {
    const [theirs] = await recipients(other);
    const refused = await post(session, `/alerts/${theirs!.id}/remove`);
    expect(refused.status).toBe(404);
    expect(await recipients(other)).toHaveLength(1);
    const page = await (await fetch(`${area.origin}/alerts`, { headers: { cookie: session.cookie } })).text();
    expect(page).not.toContain("dev@other.example");
  });
});

/**
 * A relay that greets and then never answers (a TCP server that says "220" and nothing more):
 * adding an address still answers, saying the mail could not be sent, and writes the address
 * unconfirmed (the form waits at most CONFIRMATION_MAIL_WAIT_MS, not the SMTP client's own
 * timeouts; how long it waited is not asserted).
 */
describe("adding an address while the relay never answers", () => {
  it("answers, saying the confirmation mail could not be sent, and keeps the address unconfirmed (shown expired once its link is)", async () => {
    const open = new Set<Socket>();
    const stalling = createServer((socket) => {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => {});
      socket.write("220 stalling.example ESMTP\r\n");
    });
    await new Promise<void>((done) => stalling.listen(0, "127.0.0.1", done));
    const stalled = await startArea(inject("pgAdminUrl"), "'self'", {
      mailServer: { smtpUrl: `smtp://127.0.0.1:${(stalling.address() as AddressInfo).port}`, from: "alerts@platter.test" },
    });
    try {
      const kitchen = await createOrganization(stalled.db, "Stalled Kitchen");
      const signedIn = await signIn(stalled, await stalled.link(kitchen.id));
      const added = await postForm(stalled, "/alerts", { form_token: signedIn.formToken, email: "dev@stalled.example" }, { cookie: signedIn.cookie });
      expect(added.status).toBe(303);
      expect(added.headers.get("location")).toMatch(/^\/alerts\?added=\d+&mailed=0$/);
      const shown = await fetch(stalled.origin + added.headers.get("location")!, { headers: { cookie: signedIn.cookie } });
      expect(shown.status).toBe(200);
      expect(await shown.text()).toContain("The confirmation e-mail to dev@stalled.example could not be sent.");
      expect(await stalled.db.orm.em.getConnection().execute("select email, confirmed_at from alert_recipients where organization_id = ?", [kitchen.id]))
        .toEqual([{ email: "dev@stalled.example", confirmed_at: null }]);
      // Its link past its 24 hours (the row moved back): shown as expired, still listed until removed.
      await stalled.db.orm.em.getConnection().execute(
        "update alert_recipients set confirmation_expires_at = now() - interval '1 second' where organization_id = ?", [kitchen.id]);
      const listed = await fetch(`${stalled.origin}/alerts`, { headers: { cookie: signedIn.cookie } });
      expect(listed.status).toBe(200);
      const text = await listed.text();
      expect(text).toContain("Link expired: remove it and add it again");
      expect(text).not.toContain("Waiting for confirmation");
    } finally {
      await stalled.stop();
      for (const socket of open) socket.destroy();
      await new Promise<void>((done) => stalling.close(() => done()));
    }
  }, 60_000);
});
