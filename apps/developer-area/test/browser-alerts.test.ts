import { createOrganization, type OrganizationFixture, startTestSmtpServer, type TestSmtpServer } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside, expectTextShown } from "./layout-checks.ts";

/**
 * The Alerts page in a real headless Chromium, at 1280 and 390 px, with a real SMTP server on
 * 127.0.0.1: an address is added (its confirmation link mailed), the link's page is opened in a
 * browser without a session and its button confirms it, the list says so, and the address is
 * removed; text whole, inside its boxes and never drawn over other text. Screenshots:
 * `test-output/alerts-<width>-<step>.png`.
 */

let area: RunningArea;
let org: OrganizationFixture;
let browser: Browser;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await startTestSmtpServer();
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    mailServer: { smtpUrl: smtp.url, from: "alerts@platter.test" },
  });
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
  await smtp?.close();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}alerts-${name}.png`, fullPage: true });
const laidOut = async (page: Page) => {
  await expectFitsWidth(page);
  await expectNoOverlap(page, "main h1, main h2, main p, main label, main input, main button, main td, main th, .notice");
  await expectTextShown(page, "main h1, main label, main button, .notice, table.alerts td.name");
  await expectTextInside(page, "main .panel > *", ".panel");
};

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("at $width px", ({ width, viewport }) => {
  it("adds an address, confirms it from the mailed link's button, and removes it", async () => {
    const email = `oncall-${width}@harbour-kitchen.example`;
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.getByRole("link", { name: "Alerts", exact: true }).click();
    await heading(page, "Alerts");
    await laidOut(page);
    await screenshot(page, `${width}-1-empty`);

    const mailsBefore = smtp.received.length;
    await page.getByLabel("E-mail address").fill(email);
    await page.getByRole("button", { name: "Send confirmation link" }).click();
    await page.getByRole("status").filter({ hasText: `A confirmation link was mailed to ${email}` }).waitFor();
    expect(await page.locator("table.alerts tbody tr").filter({ hasText: email }).innerText()).toContain("Waiting for confirmation");
    await laidOut(page);
    await screenshot(page, `${width}-2-waiting`);

    expect(smtp.received.length).toBe(mailsBefore + 1);
    const link = new RegExp(`${area.origin}/alerts/confirm/[A-Za-z0-9_-]{43}`).exec(smtp.received.at(-1)!.text ?? "")![0];
    const { page: inbox, problems: inboxProblems } = await watchedPage(browser, { viewport });
    await inbox.goto(link);
    await heading(inbox, "Receive webhook alerts at this address?");
    await screenshot(inbox, `${width}-3-link`);
    await inbox.getByRole("button", { name: "Confirm" }).click();
    await heading(inbox, "Alerts confirmed");
    expect(await inbox.locator("main, body").first().innerText()).toContain(`${email} now receives your organization's webhook alerts`);
    await expectFitsWidth(inbox);
    await screenshot(inbox, `${width}-4-confirmed`);

    await page.reload();
    await heading(page, "Alerts");
    expect(await page.locator("table.alerts tbody tr").filter({ hasText: email }).innerText()).toContain("Confirmed");
    await laidOut(page);
    await screenshot(page, `${width}-5-confirmed`);

    await page.locator("table.alerts tbody tr").filter({ hasText: email }).getByRole("button", { name: /^Remove/ }).click();
    await heading(page, "Alerts");
    expect(await page.locator("table.alerts tbody tr").filter({ hasText: email }).count()).toBe(0);
    expect(problems).toEqual([]);
    expect(inboxProblems).toEqual([]);
  });
});
