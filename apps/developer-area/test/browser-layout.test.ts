import { createServer, type Server } from "node:http";
import { loadDispatcherConfig, type RunningDispatcher, startDispatcher } from "@platter/dispatcher";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, freePort, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DESKTOP, launchBrowser, PHONE, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";
import { expectFitsWidth, expectNoOverlap, expectTextInside, expectTextShown } from "./layout-checks.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * The layout of the Webhooks and Deliveries pages at 1280 px and at 390 px, measured in a real
 * headless Chromium: no two pieces of text drawn over each other, and text that tells things apart
 * shown whole. The organization has four endpoints on one host (127.0.0.1), differing only by
 * scheme, port or path, each sent three messages by a real dispatcher: one answers 200, one 500,
 * one refuses the connection, and one is an `https://` address of a plain-HTTP server, whose
 * failed TLS handshake leaves a long error with no spaces to wrap at. Screenshots under
 * `test-output/layout-*.png`.
 */

/** The messages each endpoint is sent (one `client.created` per client made). */
const MESSAGES = 3;

let area: RunningArea;
let dispatcher: RunningDispatcher;
let receiver: Server;
let org: OrganizationFixture;
let browser: Browser;
/** The endpoints, by what their receiver does with a delivery. */
let endpoints: { readonly ok: string; readonly failing: string; readonly refused: string; readonly tls: string };
/** The endpoint whose last attempt failed with the TLS error. */
let tlsEndpointId: number;

beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: true });
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/hooks/orders") res.writeHead(200).end("ok");
      else res.writeHead(500, { "content-type": "text/html" }).end("<h1>Internal Server Error</h1>");
    });
  });
  const port = await freePort();
  await new Promise<void>((done) => receiver.listen(port, "127.0.0.1", done));
  const nobody = await freePort();
  endpoints = {
    ok: `http://127.0.0.1:${port}/hooks/orders`,
    failing: `http://127.0.0.1:${port}/hooks/invoices`,
    refused: `http://127.0.0.1:${nobody}/hooks/orders`,
    tls: `https://127.0.0.1:${port}/hooks/orders`,
  };
  const added = [];
  for (const url of Object.values(endpoints)) {
    added.push(await area.db.run(WebhookEndpointRepository.use((repository) => repository.add(org.scope, url, [], generateSigningSecret()))));
  }
  tlsEndpointId = added[3]!.id;
  // One try per delivery: a failure is final at once.
  dispatcher = await startDispatcher(
    loadDispatcherConfig({
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", WEBHOOK_RETRY_SCHEDULE: "0s", DISPATCHER_OPS_PORT: "0", HOST: "127.0.0.1", DISPATCHER_POLL_INTERVAL: "200ms",
    }),
    pino({ level: "silent" }),
    area.db.runtime,
  );
  for (const name of ["Grace Hopper", "Ada Lovelace", "Katherine Johnson"].slice(0, MESSAGES)) {
    await area.db.run(Clients.create(apiKeyActor(org.scope), { name }));
  }
  await everyAttemptMade();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await dispatcher?.stop();
  receiver?.closeAllConnections();
  await new Promise((done) => receiver?.close(done));
  await area?.stop();
});

/** Waits (at most 20 s) until the dispatcher has tried every message at every endpoint. */
const everyAttemptMade = async () => {
  for (let waited = 0; ; waited += 200) {
    const overview = await area.db.run(WebhookEndpointRepository.use((repository) => repository.overview(org.scope)));
    if (overview.every((endpoint) => endpoint.health.attempts === MESSAGES)) return;
    if (waited > 20_000) throw new Error(`attempts so far: ${overview.map((endpoint) => endpoint.health.attempts).join(", ")}`);
    await new Promise((done) => setTimeout(done, 200));
  }
};

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}layout-${name}.png`, fullPage: true });

/** What every page must get right at any width: it fits the window, the top bar's text is whole and apart, and each panel holds its own text. */
const expectFrameLaidOut = async (page: Page) => {
  await expectFitsWidth(page);
  await expectNoOverlap(page, ".topbar :is(.brand, .topbar-org, .sign-out)");
  await expectTextShown(page, ".topbar :is(.brand, .topbar-org, .sign-out)");
  await expectTextInside(page, "main .panel :is(h2, p, dt, dd, label, .button, th, td)", ".panel");
};

/** How many pixels a table's box scrolls sideways (0 when every column fits). */
const sideways = (page: Page, table: string) => page.locator(`.table-scroll:has(${table})`).evaluate((box) => box.scrollWidth - box.clientWidth);

describe.each([
  // On a desktop every column of a table fits; on a phone a table scrolls sideways in its own box, the page does not.
  { width: "1280", viewport: DESKTOP, tablesScroll: false },
  { width: "390", viewport: PHONE, tablesScroll: true },
])("at $width px", ({ width, viewport, tablesScroll }) => {
  it("an endpoint's Overview keeps a long error of its last attempt inside its own item", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks/${tlsEndpointId}`);
    await heading(page, endpoints.tls);
    await screenshot(page, `${width}-endpoint`);
    // Long, and with a run of over 60 characters without a space (an OpenSSL source path).
    expect(await page.locator(".facts .attempt-error").textContent()).toMatch(/^ERR_SSL_WRONG_VERSION_NUMBER: .*\S{60,}/s);
    await expectFrameLaidOut(page);
    // Each term and value of the Overview, and the parts of the last attempt (answer, error, time).
    await expectNoOverlap(page, "#overview-heading ~ .facts :is(dt, dd, .last-attempt > *, time > *)");
    await expectTextInside(page, "#overview-heading ~ .facts :is(dt, dd)", ".facts > div");
    await expectTextShown(page, "#overview-heading ~ .facts :is(dt, dd)");
    expect(problems).toEqual([]);
  });

  it("the Webhooks list shows every endpoint's URL whole, and its last attempt beside it", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/webhooks`);
    await heading(page, "Webhooks");
    await screenshot(page, `${width}-webhooks`);
    await expectFrameLaidOut(page);
    await expectNoOverlap(page, "table.endpoints :is(th, td, .last-attempt > *)");
    await expectTextInside(page, "table.endpoints td > *", "td");
    await expectTextShown(page, "table.endpoints td");
    expect(await page.locator("table.endpoints td.url").allTextContents()).toEqual(Object.values(endpoints));
    expect(await sideways(page, "table.endpoints") > 0).toBe(tablesScroll);
    expect(problems).toEqual([]);
  });

  it("the deliveries log shows each endpoint's URL whole, so endpoints on one host are told apart", async () => {
    const { page, problems } = await watchedPage(browser, { viewport });
    await signInInBrowser(page, await area.link(org.id));
    await page.goto(`${area.origin}/deliveries`);
    await heading(page, "Deliveries");
    expect(await page.locator("table.log tbody tr").count()).toBe(MESSAGES * Object.keys(endpoints).length);
    await screenshot(page, `${width}-deliveries`);
    await expectFrameLaidOut(page);
    await expectNoOverlap(page, "table.log :is(th, td, td .message > *, td .last > *, time > *)");
    await expectTextInside(page, "table.log td > *", "td");
    await expectTextShown(page, "table.log td.url");
    // Every endpoint's whole URL is there to read, in the cell of each of its deliveries.
    expect(new Set(await page.locator("table.log td.url").allInnerTexts())).toEqual(new Set(Object.values(endpoints)));
    expect(await sideways(page, "table.log") > 0).toBe(tablesScroll);
    // The endpoints' column, scrolled to where a phone shows it.
    await page.locator("table.log td.url").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENSHOTS}layout-${width}-deliveries-endpoints.png` });
    expect(problems).toEqual([]);
  });
});
