import { createOrganization, createSandbox, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextShown } from "./layout-checks.ts";

/**
 * What `platter listen` shows in the Developer area, in a real headless Chromium at 1280 and 390 px:
 * the key's listener on the Webhooks list, marked "platter listen · connected" beside its URL (no
 * text drawn over another), its page saying what it is, and the Audit log naming the key as the actor
 * of a trigger. A real stream is open on `/cli/listen` while the pages are shown. Screenshots under
 * `test-output/listen-*.png`.
 */

const FORWARD_TO = "http://localhost:4000/platter-hook";

let area: RunningArea;
let sandbox: OrganizationFixture;
let browser: Browser;
let stream: AbortController;
let listenerId: number;

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  sandbox = await createSandbox(area.db, await createOrganization(area.db, "Harbour Kitchen"));
  stream = new AbortController();
  const opened = await fetch(`${area.origin}/cli/listen?forward_to=${encodeURIComponent(FORWARD_TO)}`, {
    headers: { authorization: `Bearer ${sandbox.writeKey}` }, signal: stream.signal,
  });
  expect(opened.status).toBe(200);
  const first = await opened.body!.pipeThrough(new TextDecoderStream()).getReader().read();
  listenerId = JSON.parse(/data: (.*)/.exec(first.value!)![1]!).listener_id;
  const triggered = await fetch(`${area.origin}/cli/trigger`, {
    method: "POST", headers: { authorization: `Bearer ${sandbox.writeKey}`, "content-type": "application/json" }, body: JSON.stringify({ type: "invoice.sent" }),
  });
  expect(triggered.status).toBe(201);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  stream?.abort();
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}listen-${name}.png`, fullPage: true });

describe.each([
  { width: "1280", viewport: DESKTOP },
  { width: "390", viewport: PHONE },
])("at $width px", ({ width, viewport }) => {
  it("the Webhooks list marks the listener as connected beside its whole URL, and its page says what it is", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(sandbox.id));
    await page.goto(`${area.origin}/webhooks`);
    await heading(page, "Webhooks");
    await screenshot(page, `${width}-webhooks`);
    await expectFitsWidth(page);
    expect(await page.locator("table.endpoints td.url a").allTextContents()).toEqual([FORWARD_TO]);
    expect(await page.locator("table.endpoints td.url .badge").textContent()).toBe("platter listen · connected");
    await expectNoOverlap(page, "table.endpoints :is(th, td, td.url a, td.url .badge)");
    await expectTextShown(page, "table.endpoints td.url :is(a, .badge)");

    await page.getByRole("link", { name: FORWARD_TO }).click();
    await heading(page, FORWARD_TO);
    expect(new URL(page.url()).pathname).toBe(`/webhooks/${listenerId}`);
    await screenshot(page, `${width}-endpoint`);
    await expectFitsWidth(page);
    const callout = page.locator(".callout-info");
    expect(await callout.innerText()).toMatch(/^Local listener\. platter listen with key platter_test_rw_\S+… forwards this endpoint's deliveries to this URL on its own machine, and its answers are recorded as the attempts\.\s+It is connected now\.$/);
    await expectTextShown(page, ".callout-info");
    expect(problems).toEqual([]);
  });

  it("the Audit log names the API key as the actor of the trigger and of the listener's creation", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(sandbox.id));
    await page.goto(`${area.origin}/audit-log?actor=api_key`);
    await heading(page, "Audit log");
    await screenshot(page, `${width}-audit-log`);
    await expectFitsWidth(page);
    const rows = page.locator("table tbody tr");
    expect(await rows.count()).toBe(2);
    expect(await rows.locator("td.who").allInnerTexts()).toEqual([
      expect.stringMatching(/^API key\s+platter_test_rw_\S+…$/), expect.stringMatching(/^API key\s+platter_test_rw_\S+…$/),
    ]);
    expect(await rows.locator("td:nth-child(3) code").allTextContents()).toEqual(["sandbox.triggered", "webhook_listener.created"]);
    expect(problems).toEqual([]);
  });
});
