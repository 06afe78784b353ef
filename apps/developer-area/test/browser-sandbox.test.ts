import { WEBHOOK_EVENT_TYPES } from "@platter/domain";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextShown } from "./layout-checks.ts";

/**
 * The sandbox in a real headless Chromium: create it, open it (the browser switches to the
 * sandbox's session; every page shows the Sandbox banner and badge), trigger each event type,
 * reset after the confirmation step, and go back to live, at 1280 and 390 px wide, with no CSP or
 * script problem and the top bar's text never drawn over itself. Screenshots under
 * `test-output/sandbox-*.png`.
 */

let area: RunningArea;
let org: OrganizationFixture;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Harbourside Events & Fine Catering Company");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text }).waitFor({ timeout: 10_000 });

/** Full-page screenshots at 1280 px and at 390 px, the top bar and banner checked at both widths. */
const screenshots = async (page: Page, name: string) => {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await expectFitsWidth(page);
    await expectNoOverlap(page, ".topbar .brand, .topbar .topbar-org, .topbar .sign-out button");
    await expectTextShown(page, ".topbar-org strong");
    await page.screenshot({ path: `${SCREENSHOTS}${name}-${size.width}.png`, fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
};

describe("the sandbox in a browser", () => {
  it("creates, opens, triggers every event type, resets and goes back to live", async () => {
    const { page, problems } = await watchedPage(browser);
    await signInInBrowser(page, await area.link(org.id));
    await page.getByRole("link", { name: "Sandbox", exact: true }).click();
    await heading(page, "Sandbox");
    expect(await page.locator(".sandbox-banner").count()).toBe(0);
    await screenshots(page, "sandbox-1-live");

    await page.getByRole("button", { name: "Create sandbox" }).click();
    await page.getByRole("status").filter({ hasText: "Your sandbox is ready" }).waitFor();
    await page.getByRole("button", { name: "Open sandbox" }).click();
    await page.getByRole("heading", { level: 2, name: "Make an event happen" }).waitFor();
    expect(await page.locator(".sandbox-banner").textContent()).toContain("Sandbox");
    expect(await page.locator(".topbar .badge-sandbox").textContent()).toBe("Sandbox");
    await screenshots(page, "sandbox-2-opened");

    for (const type of WEBHOOK_EVENT_TYPES) {
      await page.getByRole("button", { name: `Trigger ${type}` }).click();
      await page.getByRole("status").filter({ hasText: `${type} happened in the sandbox` }).waitFor();
    }
    await screenshots(page, "sandbox-3-triggered");

    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await heading(page, "Deliveries");
    expect(await page.locator(".sandbox-banner").count()).toBe(1);
    await screenshots(page, "sandbox-4-deliveries");

    await page.getByRole("link", { name: "Sandbox", exact: true }).click();
    await page.getByRole("link", { name: "Reset data…" }).click();
    await heading(page, "Reset the sandbox's data?");
    await screenshots(page, "sandbox-5-confirm-reset");
    await page.getByRole("button", { name: "Reset data" }).click();
    await page.getByRole("status").filter({ hasText: "reset to the demo data" }).waitFor();

    await page.getByRole("button", { name: "Back to live" }).click();
    await page.getByRole("button", { name: "Open sandbox" }).waitFor();
    expect(await page.locator(".sandbox-banner").count()).toBe(0);
    expect(await page.locator(".badge-sandbox").count()).toBe(0);

    const messages = await area.db.orm.em.getConnection().execute<{ type: string }[]>(
      "select m.type from webhook_messages m join organizations o on o.id = m.organization_id where o.sandbox_of = ? order by m.id", [org.id],
    );
    expect(messages.map((row) => row.type)).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect(problems).toEqual([]);
  });
});
