import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside, expectTextShown } from "./layout-checks.ts";

/**
 * Deleting an endpoint in a real headless Chromium, at 1280 and 390 px: from its page to the
 * confirmation (what goes, what stays), cancelled once, then confirmed; the Webhooks page says it
 * is deleted and lists it no more; the delivery log still shows its delivery, ended as "endpoint
 * deleted" and marked as a deleted endpoint's, as on the message's page (no replay); its page is gone (404). Each state's text is checked
 * by element boxes (no overlap, nothing cut, nothing outside its box, no sideways scroll).
 * Screenshots: `test-output/delete-<width>-*.png`.
 */

/** A long URL, with no space to wrap at, to test the layouts. */
const URL_OF = (width: string) => `https://198.51.100.77/caterer-webhooks/receivers/production/platter-events-${width}-px-${"x".repeat(40)}`;

let area: RunningArea;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });

/** Every check by element boxes of the text `selector` matches, inside `container`. */
const laidOut = async (page: Page, selector: string, container: string) => {
  await expectFitsWidth(page);
  await expectNoOverlap(page, selector);
  await expectTextShown(page, selector);
  await expectTextInside(page, selector, container);
};

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("at $width px", ({ width, viewport }) => {
  it("deletes an endpoint after its confirmation page; its delivery stays in the log as a deleted endpoint's", async () => {
    const org = await createOrganization(area.db, `Deleting at ${width}`);
    const url = URL_OF(width);
    const { id } = await area.db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
    await area.db.run(Clients.create(apiKeyActor(org.scope), { name: "Queued before the delete" }));
    const screenshot = (name: string) => page.screenshot({ path: `${SCREENSHOTS}delete-${width}-${name}.png`, fullPage: true });

    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks/${id}`);
    await heading(page, url);
    await page.getByRole("heading", { level: 2, name: "Delete this endpoint" }).waitFor();
    await screenshot("1-endpoint");
    await laidOut(page, "section[aria-labelledby=delete-heading] > *", "section");

    // Cancelled first: nothing happens.
    await page.getByRole("link", { name: "Delete endpoint…" }).click();
    await heading(page, "Delete this endpoint?");
    await page.getByRole("link", { name: "Cancel" }).click();
    await heading(page, url);

    await page.getByRole("link", { name: "Delete endpoint…" }).click();
    await heading(page, "Delete this endpoint?");
    expect(await page.locator("ul.consequences li").allInnerTexts()).toEqual([
      "Nothing more is sent to it: new events are not queued for it, and deliveries still queued end as endpoint deleted.",
      "Its signing secret is destroyed, and it cannot be enabled, edited or sent test events again.",
      "Its deliveries stay in the delivery log, shown as a deleted endpoint, until retention removes them.",
      "It no longer counts towards your organization's limit on endpoints.",
    ]);
    await screenshot("2-confirm");
    await laidOut(page, "main h1, main .breadcrumb, main .panel p, main .panel li, main .panel .button", "main");

    await page.getByRole("button", { name: "Delete endpoint" }).click();
    await heading(page, "Webhooks");
    await page.getByRole("status").filter({ hasText: "Endpoint deleted: nothing more is sent to it" }).waitFor();
    await page.getByText("No endpoints yet.").waitFor();
    await screenshot("3-deleted");
    await laidOut(page, "main .notice, main .panel p", "main");

    await page.goto(`${area.origin}/deliveries`);
    await heading(page, "Deliveries");
    const row = page.locator("table.log tbody tr");
    expect(await row.count()).toBe(1);
    expect(await row.locator("td.url").innerText()).toMatch(new RegExp(`Deleted endpoint$`));
    expect(await row.locator("td.url").innerText()).toContain("198.51.100.77");
    expect(await row.locator("td.url a").count()).toBe(0);
    expect(await row.locator(".outcome").innerText()).toBe("Ended: endpoint deleted");
    await screenshot("4-delivery-log");
    await laidOut(page, "table.log td.url > span, table.log .outcome, table.log td .badge", "td");

    // The message's page says the same, and offers no replay to it.
    await row.locator(".message a").click();
    await page.locator("h1", { hasText: "Message" }).waitFor();
    const panel = page.locator("section.delivery");
    expect(await panel.locator(".delivery-head .badge").allInnerTexts()).toEqual(["Failed", "Deleted endpoint"]);
    expect(await panel.locator("p.hint").innerText()).toBe("Its endpoint was deleted: nothing more is sent to it.");
    expect(await panel.getByRole("button").count()).toBe(0);
    await screenshot("5-message");
    await laidOut(page, "section.delivery .delivery-head > *, section.delivery p.hint", "section");

    const gone = await page.goto(`${area.origin}/webhooks/${id}/delete`);
    expect(gone?.status()).toBe(404);
    await heading(page, "Page not found");
    expect(problems).toEqual([]);
  });
});
