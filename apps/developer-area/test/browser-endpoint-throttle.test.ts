import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside, expectTextShown } from "./layout-checks.ts";

/**
 * An endpoint's throttle on its page in a real headless Chromium, at 1280 and 390 px: set it with
 * its own form (shown in the overview, audited), a refused value said beside the field with nothing
 * written, and removed again. Screenshots: `test-output/throttle-<width>-<state>.png`.
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

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);
const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}throttle-${name}.png`, fullPage: true });
const throttleFact = (page: Page) => page.locator(".facts div", { has: page.locator("dt", { hasText: "Throttle" }) }).locator("dd").innerText();
const throttleOf = async (id: number) =>
  (await rows<{ throttle_per_second: number | null }>("select throttle_per_second from webhook_endpoints where id = ?", [id]))[0]!.throttle_per_second;

/** The layout checks of the throttle panel. */
const expectPanelLaidOut = async (page: Page) => {
  await expectFitsWidth(page);
  await expectNoOverlap(page, "section[aria-labelledby='throttle-heading'] :is(h2, p, label, input, button)");
  await expectTextInside(page, "section[aria-labelledby='throttle-heading'] :is(h2, p, label, button)", ".panel");
  await expectTextShown(page, "section[aria-labelledby='throttle-heading'] :is(h2, label, button)");
};

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("at $width px", ({ width, viewport }) => {
  it("an endpoint's throttle is set with its own form, shown, refused beside its field when out of range, and removed", async () => {
    const url = `https://198.51.100.${width === "1280" ? 20 : 21}/catering-hook`;
    const { id } = await area.db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks/${id}`);
    await heading(page, url);
    expect(await throttleFact(page)).toBe("none");
    await screenshot(page, `${width}-none`);
    await expectPanelLaidOut(page);

    // Out of range: said beside the field, the value kept, nothing written.
    await page.getByLabel("Deliveries per second").fill("5000");
    await page.getByRole("button", { name: "Save throttle" }).click();
    await page.locator("#throttle-error").waitFor({ timeout: 10_000 });
    expect(await page.locator("#throttle-error").innerText()).toContain("from 1 to 1000, or none");
    expect(await page.getByLabel("Deliveries per second").inputValue()).toBe("5000");
    expect(await page.getByLabel("Deliveries per second").getAttribute("aria-invalid")).toBe("true");
    expect(await throttleOf(id)).toBeNull();
    await screenshot(page, `${width}-refused`);
    await expectPanelLaidOut(page);

    await page.getByLabel("Deliveries per second").fill("5");
    await page.getByRole("button", { name: "Save throttle" }).click();
    await page.getByRole("status").waitFor({ timeout: 10_000 });
    expect(await page.getByRole("status").innerText()).toContain("Throttle saved");
    expect(await throttleFact(page)).toBe("5 deliveries per second");
    expect(await page.getByLabel("Deliveries per second").inputValue()).toBe("5");
    expect(await throttleOf(id)).toBe(5);
    await screenshot(page, `${width}-set`);
    await expectPanelLaidOut(page);

    await page.getByRole("button", { name: "Remove throttle" }).click();
    await page.getByRole("status").waitFor({ timeout: 10_000 });
    expect(await throttleFact(page)).toBe("none");
    expect(await page.getByRole("button", { name: "Remove throttle" }).count()).toBe(0);
    expect(await throttleOf(id)).toBeNull();

    const audit = await rows("select action from audit_log where subject = ? order by id", [`webhook_endpoint ${id}`]);
    expect(audit).toEqual([{ action: "webhook_endpoint.throttled" }, { action: "webhook_endpoint.unthrottled" }]);
    expect(problems).toEqual([]);
  });
});
