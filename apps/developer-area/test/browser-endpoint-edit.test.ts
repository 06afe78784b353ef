import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside } from "./layout-checks.ts";

/**
 * Editing an endpoint in a real headless Chromium, at 1280 and 390 px: the edit form filled in from
 * the endpoint, a URL the SSRF guard refuses said beside the field (nothing saved), then a new URL,
 * event types and a description with markup in it, shown as characters on the endpoint's page, the
 * Webhooks list and the audit log's before → after; no text drawn over other text, and no page
 * wider than the window. Screenshots under `test-output/endpoint-edit-*.png`.
 */

/** A description an integrator might write, with markup that must stay characters. */
const DESCRIPTION = `<b>Billing</b> sync & invoices — owned by the finance team; "urgent" on-call: +44 20 7946 0000`;

let area: RunningArea;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: false });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("editing an endpoint at $width px", ({ width, viewport }) => {
  it("refuses a private URL beside its field, then saves a new URL, types and description, shown as text and audited", async () => {
    const org = await createOrganization(area.db, `Edit Kitchen ${width}`);
    const oldUrl = `https://198.51.100.7/platter/hooks-${width}`;
    const newUrl = `https://203.0.113.9:8443/receivers/platter/a-rather-long-path-for-a-narrow-screen-${width}`;
    const { id } = await area.db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, oldUrl, [], generateSigningSecret())));
    const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}endpoint-edit-${width}-${name}.png`, fullPage: true });
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks/${id}`);
    await heading(page, oldUrl);
    await page.getByRole("link", { name: "Edit endpoint" }).click();
    await heading(page, "Edit endpoint");
    expect(await page.getByLabel("Endpoint URL").inputValue()).toBe(oldUrl);
    expect(await page.getByRole("radio", { name: /Every event type/ }).isChecked()).toBe(true);
    await screenshot(page, "1-form");

    // Refused by the SSRF guard: said beside the URL, what was entered kept, nothing saved.
    await page.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/hook");
    await page.getByLabel(/Description/).fill(DESCRIPTION);
    const refused = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Save changes" }).click();
    expect((await refused).status()).toBe(400);
    await page.getByText("Webhooks are sent only to public internet addresses, and 127.0.0.1 is not allowed.").waitFor();
    expect(await page.getByLabel(/Description/).inputValue()).toBe(DESCRIPTION);
    await expectNoOverlap(page, "form :is(label, .field-error, .hint, input, textarea, legend, .choice)");
    await expectFitsWidth(page);
    await screenshot(page, "2-refused");
    expect((await area.db.orm.em.getConnection().execute("select url, description from webhook_endpoints where id = ?", [id]))[0])
      .toEqual({ url: oldUrl, description: null });

    await page.getByLabel("Endpoint URL").fill(newUrl);
    await page.getByRole("radio", { name: /Only the types ticked below/ }).check();
    await page.getByRole("checkbox", { name: /invoice\.paid/ }).check();
    const saved = page.waitForResponse((response) => response.request().method() === "POST");
    await page.getByRole("button", { name: "Save changes" }).click();
    expect((await saved).status()).toBe(303);
    await heading(page, newUrl);
    await page.getByRole("status").filter({ hasText: "Endpoint saved." }).waitFor();
    // Markup in the description is characters, never elements.
    expect(await page.locator(".page-header .endpoint-description").textContent()).toBe(DESCRIPTION);
    expect(await page.locator(".page-header .endpoint-description b").count()).toBe(0);
    await expectNoOverlap(page, ".page-header :is(.breadcrumb, h1, .endpoint-description, .button)");
    await expectTextInside(page, ".page-header :is(h1, .endpoint-description)", "main");
    await expectFitsWidth(page);
    await screenshot(page, "3-saved");

    await page.goto(`${area.origin}/webhooks`);
    await heading(page, "Webhooks");
    expect(await page.locator("table.endpoints .endpoint-description").textContent()).toBe(DESCRIPTION);
    await screenshot(page, "4-list");

    await page.goto(`${area.origin}/audit-log`);
    await heading(page, "Audit log");
    const details = page.locator(".audit-details");
    expect(await details.count()).toBe(1);
    expect(await details.locator("dt").allTextContents()).toEqual(["description", "event types", "url"]);
    expect(await details.locator("dd").allTextContents()).toEqual([`none → ${DESCRIPTION}`, "every type → invoice.paid", `${oldUrl} → ${newUrl}`]);
    expect(await details.locator("b").count()).toBe(0);
    await expectNoOverlap(page, "table :is(th, td, .audit-details dt, .audit-details dd)");
    await screenshot(page, "5-audit");
    expect(problems).toEqual([]);
  });
});
