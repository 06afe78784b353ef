import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { endpointsWithNotices, MARKUP_URL } from "./endpoint-notice-fixtures.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside, expectTextShown } from "./layout-checks.ts";

/**
 * The operational notices' banners in a real headless Chromium, at 1280 and 390 px: on the Webhooks
 * list (failing, about to be disabled, disabled) and on an endpoint's page, first thing under the
 * heading, their text whole and inside them, the markup in a URL shown as text. Screenshots:
 * `test-output/notices-<width>-webhooks.png` and `notices-<width>-endpoint.png`.
 */

let area: RunningArea;
let org: OrganizationFixture;
let browser: Browser;
let ids: Awaited<ReturnType<typeof endpointsWithNotices>>;

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  ids = await endpointsWithNotices(area.db, org);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}notices-${name}.png`, fullPage: true });

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("at $width px", ({ width, viewport }) => {
  it("the Webhooks list shows a banner per endpoint with a notice, above the endpoints", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks`);
    await heading(page, "Webhooks");
    await screenshot(page, `${width}-webhooks`);
    const banners = page.locator(".endpoint-notice");
    expect(await banners.evaluateAll((all) => all.map((b) => b.getAttribute("data-notice")))).toEqual(["failing", "disabling_soon", "disabled"]);
    expect(await banners.first().innerText()).toContain(MARKUP_URL);
    expect(await banners.nth(1).innerText()).toMatch(/^About to be disabled at .+: https:\/\/198\.51\.100\.10\/soon — every delivery has failed/);
    expect(await banners.nth(2).innerText()).toMatch(/^Disabled at .+: https:\/\/198\.51\.100\.11\/gone — because endpoint answered 410 Gone\./);
    // Above the endpoints' table, in view without scrolling.
    const top = (selector: string) => page.locator(selector).first().evaluate((e) => e.getBoundingClientRect().top);
    expect(await top(".endpoint-notice")).toBeLessThan(await top("#endpoints-heading"));
    expect(await top(".endpoint-notice")).toBeLessThan(viewport.height);
    await expectFitsWidth(page);
    await expectNoOverlap(page, ".endpoint-notice");
    await expectTextInside(page, ".endpoint-notice > *", ".endpoint-notice");
    await expectTextShown(page, ".endpoint-notice");
    expect(problems).toEqual([]);
  });

  it("an endpoint's page shows its own banner first", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks/${ids.soon}`);
    await heading(page, "https://198.51.100.10/soon");
    await screenshot(page, `${width}-endpoint`);
    expect(await page.locator(".endpoint-notice").evaluateAll((all) => all.map((b) => b.getAttribute("data-notice")))).toEqual(["disabling_soon"]);
    await expectFitsWidth(page);
    await expectTextShown(page, ".endpoint-notice");
    expect(problems).toEqual([]);
  });
});
