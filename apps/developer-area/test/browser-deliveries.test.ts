import { createServer, type Server } from "node:http";
import { buildOpenApiDocument } from "@platter/contract";
import { apiKeyActor, generateSigningSecret, MESSAGE_TYPES } from "@platter/domain";
import { loadDispatcherConfig, type RunningDispatcher, startDispatcher } from "@platter/dispatcher";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, freePort, type OrganizationFixture } from "@platter/testing";
import { Seeding } from "@platter/seeds";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { Clients } from "@platter/application";

/**
 * Deliveries, the event catalog and the API reference end to end in a real headless Chromium,
 * with a real dispatcher delivering to a real receiver on 127.0.0.1: a delivery fails against the
 * receiver answering 500 (one try, then failed), the message's page shows the failed attempt and
 * the receiver's body as text; the receiver is mended, the message replayed, and the page shows it
 * delivered. The catalog shows every type's example; Redoc draws every operation of the reference
 * under the area's CSP. Another organization's session sees none of it. Screenshots under
 * `test-output/deliveries-*.png`.
 */

/**
 * Redoc's "API docs by Redocly" badge links its logo from Redocly's CDN: the CSP blocks it (the
 * image hides itself), so nothing is fetched. That refusal is the one console error expected.
 */
const REDOC_BADGE = /^Loading the image 'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini\.svg' violates the following Content Security Policy directive/;
/** What the broken receiver answers: markup, which the page must show as characters. */
const BROKEN_ANSWER = `<h1>Oops</h1><script>document.title="owned"</script>`;

let area: RunningArea;
let dispatcher: RunningDispatcher;
let receiver: { server: Server; url: string; status: number; received: number };
let org: OrganizationFixture;
let other: OrganizationFixture;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: true });
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  other = await createOrganization(area.db, "Other Kitchen Ltd");
  const port = await freePort();
  const state = { status: 500, received: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      state.received += 1;
      res.writeHead(state.status, { "content-type": "text/html" }).end(state.status === 200 ? "ok" : BROKEN_ANSWER);
    });
  });
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  receiver = Object.assign(state, { server, url: `http://127.0.0.1:${port}/hooks/platter` });
  // One try per delivery: a 500 fails it for good at once (the schedule is the only difference from `npm start`).
  dispatcher = await startDispatcher(
    loadDispatcherConfig({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "0s", DISPATCHER_OPS_PORT: "0", HOST: "127.0.0.1", DISPATCHER_POLL_INTERVAL: "200ms",
    }),
    pino({ level: "silent" }),
    area.db.runtime,
  );
  // Some history first, so the log has older pages; then the endpoint on the receiver.
  await area.db.run(Seeding.deliveryLog(org.scope, { deliveries: 80, endpoints: 1 }));
  // The seeded endpoint keeps its history but gets nothing new: the new message goes to the receiver only.
  const [seeded] = await area.db.run(WebhookEndpointRepository.use((endpoints) => endpoints.list(org.scope)));
  await area.db.run(WebhookEndpointRepository.use((endpoints) => endpoints.setEnabled(org.scope, seeded!.id, false)));
  await area.db.run(WebhookEndpointRepository.use((endpoints) => endpoints.add(org.scope, receiver.url, ["client.created"], generateSigningSecret())));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await dispatcher?.stop();
  receiver?.server.closeAllConnections();
  await new Promise((done) => receiver?.server.close(done));
  await area?.stop();
});

const heading = (page: Page, text: string | RegExp) => page.getByRole("heading", { level: 1, name: text }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: `${SCREENSHOTS}deliveries-${name}.png`, fullPage });

/** The browser's window, as far as a check here needs it (the test's types have no DOM). */
interface BrowserWindow {
  readonly getComputedStyle: (element: unknown) => { readonly display: string };
}

/** Reloads `page` until an element of `selector` says `text` (the dispatcher works in the background), for at most 15 s. */
const reloadUntil = async (page: Page, selector: string, text: string) => {
  for (let waited = 0; (await page.locator(selector).filter({ hasText: text }).count()) === 0; waited += 250) {
    if (waited > 15_000) throw new Error(`"${text}" never showed on ${page.url()}`);
    await page.waitForTimeout(250);
    await page.reload();
  }
};

describe("Deliveries in a browser", () => {
  it("shows a failed delivery with the receiver's answer as text, replays it and sees it delivered", async () => {
    const { page, problems } = await watchedPage(browser, { expectedError: REDOC_BADGE });
    await signInInBrowser(page, await area.link(org.id));
    await area.db.run(Clients.create(apiKeyActor(org.scope), { name: "Grace Hopper" }));

    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await heading(page, "Deliveries");
    await page.getByLabel("Endpoint").selectOption({ label: `#${await endpointId()} ${receiver.url}` });
    await page.getByRole("button", { name: "Apply" }).click();
    await heading(page, "Deliveries to one endpoint");
    await reloadUntil(page, "table.log .badge", "Failed");
    expect(receiver.received).toBe(1);
    await screenshot(page, "2-endpoint-failed");

    await page.getByRole("link", { name: /^evt_/ }).first().click();
    await heading(page, /^Message evt_/);
    await page.getByText("Response body").click();
    const body = page.locator("pre.response-body");
    expect(await body.textContent()).toBe(BROKEN_ANSWER);
    expect(await page.title()).not.toBe("owned");
    expect(await page.locator(".status-code").first().textContent()).toBe("500");
    await screenshot(page, "3-message-failed");

    receiver.status = 200;
    await page.getByRole("button", { name: "Replay to all its endpoints" }).click();
    await page.getByRole("status").filter({ hasText: "1 delivery is due again" }).waitFor();
    await reloadUntil(page, ".delivery .hint", "Delivered.");
    expect(receiver.received).toBe(2);
    expect(await page.locator(".status-code").allTextContents()).toEqual(["500", "200"]);
    await screenshot(page, "4-message-replayed");

    // The whole log, and filtered by status through the form.
    await page.getByRole("link", { name: "Deliveries", exact: true }).first().click();
    await heading(page, "Deliveries");
    await screenshot(page, "1-log");
    // At 1280 px every column, Created included, fits without scrolling.
    expect(await page.locator(".table-scroll:has(table.log)").evaluate((box) => box.scrollWidth - box.clientWidth)).toBe(0);
    await page.getByLabel("Status").selectOption("failed");
    await page.getByRole("button", { name: "Apply" }).click();
    await heading(page, "Deliveries");
    const statuses = await page.locator("table.log td .badge").allTextContents();
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(["Failed"]));
    await screenshot(page, "5-log-failed");

    expect(problems).toEqual([]);
  });

  it("another organization's session sees no deliveries, and none of this one's messages", async () => {
    const { page, problems } = await watchedPage(browser, { expectedError: REDOC_BADGE });
    await signInInBrowser(page, await area.link(other.id));
    await page.getByRole("link", { name: "Deliveries", exact: true }).click();
    await heading(page, "Deliveries");
    await page.getByText("No deliveries match.", { exact: false }).waitFor();
    expect(await page.locator("table.log").count()).toBe(0);
    await screenshot(page, "6-other-organization");
    expect(problems).toEqual([]);
  });
});

describe("the event catalog and the API reference in a browser", () => {
  it("shows every event type's example, and Redoc draws every operation of the reference under the CSP", async () => {
    const { page, problems } = await watchedPage(browser, { expectedError: REDOC_BADGE });
    await signInInBrowser(page, await area.link(org.id));
    await page.getByRole("link", { name: "Event catalog", exact: true }).click();
    await heading(page, "Event catalog");
    expect(await page.locator("section.event-type h2").allTextContents()).toEqual(MESSAGE_TYPES.map(({ type }) => type));
    await screenshot(page, "7-event-catalog");

    await page.getByRole("link", { name: "API reference", exact: true }).click();
    await heading(page, "API reference");
    await page.locator('#api-reference[data-state="rendered"]').waitFor({ timeout: 20_000 });
    const operations = await page.locator('#api-reference [data-section-id^="operation/"]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute("data-section-id")));
    expect(operations).toEqual(expect.arrayContaining(["operation/listEvents", "operation/createEvent", "operation/getMe"]));
    const document = buildOpenApiDocument();
    const described = [...Object.values(document.paths), ...Object.values(document.webhooks)].flatMap((item) => Object.keys(item));
    expect(operations).toHaveLength(described.length);
    // Redoc's styles applied: its menu is laid out, not an unstyled list.
    expect(await page.locator("#api-reference .menu-content").evaluate((node) => (globalThis as unknown as BrowserWindow).getComputedStyle(node).display)).toBe("flex");
    // The reference is tens of thousands of pixels long: its first screen, and one operation's.
    await screenshot(page, "8-api-reference", false);
    await page.locator('[data-section-id="operation/createEvent"]').scrollIntoViewIfNeeded();
    await screenshot(page, "9-api-reference-operation", false);
    await page.getByRole("link", { name: "Download OpenAPI document" }).waitFor();

    expect(problems).toEqual([]);
  });
});

/** The receiver's endpoint id (the only endpoint on 127.0.0.1). */
const endpointId = async () =>
  (await area.db.run(WebhookEndpointRepository.use((endpoints) => endpoints.list(org.scope)))).find((endpoint) => endpoint.url === receiver.url)!.id;
