import { ApiKeys } from "@platter/application";
import { operatorActor } from "@platter/domain";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";

/**
 * The Sessions and Audit log pages in a real headless Chromium: two browsers signed in to one
 * organization; the first sees both sessions, marks its own, ends the other (whose next page is
 * the sign-in page), and reads the audit log, filtered by action, at 1280 and 390 px wide, with no
 * CSP or script problem. Screenshots under `test-output/sessions-*.png` and `audit-*.png`.
 */

let area: RunningArea;
let org: OrganizationFixture;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text }).waitFor({ timeout: 10_000 });

/** Full-page screenshots of `page` at 1280 px and at 390 px (a phone), where nothing may stick out sideways. */
const screenshots = async (page: Page, name: string) => {
  await page.screenshot({ path: `${SCREENSHOTS}${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.locator("html").evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(390);
  await page.screenshot({ path: `${SCREENSHOTS}${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
};

describe("Sessions and the audit log in a browser", () => {
  it("ends another browser's session from the list, then reads that in the audit log", async () => {
    const mine = await watchedPage(browser);
    const leaked = await watchedPage(browser);
    await signInInBrowser(mine.page, await area.link(org.id));
    await signInInBrowser(leaked.page, await area.link(org.id));
    const operator = operatorActor(org.scope, "root via the CLI");
    for (let index = 0; index < 3; index += 1) await area.db.run(ApiKeys.create(operator, "read"));

    const { page } = mine;
    await page.getByRole("link", { name: "Sessions", exact: true }).click();
    await heading(page, "Sessions");
    const rows = page.locator("table.sessions tbody tr");
    expect(await rows.count()).toBe(2);
    expect(await page.locator("tr.current td.name").textContent()).toBe("Headless Chrome on Linux This browser");
    await screenshots(page, "sessions-1-two");

    await page.locator("table.sessions tbody tr:not(.current)").getByRole("button", { name: /^End session/ }).click();
    await page.getByRole("status").filter({ hasText: "1 session was ended" }).waitFor();
    expect(await rows.count()).toBe(1);
    expect(await page.getByText("No other session is signed in.").count()).toBe(1);
    await screenshots(page, "sessions-2-ended");

    const signedOut = await leaked.page.reload();
    expect(signedOut?.status()).toBe(401);
    await heading(leaked.page, "Sign in to the Developer area");

    await page.getByRole("link", { name: "Audit log", exact: true }).click();
    await heading(page, "Audit log");
    const entries = page.locator("table.audit tbody tr");
    expect(await entries.count()).toBe(4);
    expect(await entries.first().locator("code").textContent()).toBe("developer_session.ended");
    expect(await entries.first().locator("td.who").textContent()).toBe("Session Headless Chrome on Linux");
    expect(await entries.last().locator("td.who").textContent()).toBe("Operator root via the CLI");
    await screenshots(page, "audit-1-all");

    await page.getByLabel("Action").selectOption("api_key.created");
    await page.getByLabel("Who").selectOption("operator");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL((url) => url.searchParams.get("action") === "api_key.created");
    expect(await entries.count()).toBe(3);
    await screenshots(page, "audit-2-filtered");

    const refused = await page.goto(`${area.origin}/audit-log?from=2026-02-30`);
    expect(refused?.status()).toBe(400);
    expect(await page.getByRole("alert").textContent()).toBe("from must be a date written YYYY-MM-DD");
    await screenshots(page, "audit-3-bad-filter");

    expect(mine.problems).toEqual([]);
    expect(leaked.problems).toEqual([]);
  });
});
