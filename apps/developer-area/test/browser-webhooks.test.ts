import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { exampleMessage } from "@platter/domain";
import { loadDispatcherConfig, type RunningDispatcher, startDispatcher } from "@platter/dispatcher";
import { createOrganization, freePort, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";

/**
 * The Webhooks page end to end in a real headless Chromium, with a real dispatcher delivering to a
 * real receiver on 127.0.0.1: sign in, add an endpoint on the receiver, reveal its secret, send a
 * test event and see it arrive with a valid Standard Webhooks signature (checked by the npm
 * `standardwebhooks` verifier) and its attempt on the page; rotate the secret (the next test event
 * carries both signatures), disable the endpoint; and another organization's session sees none of
 * it. Every page state is saved under `test-output/webhooks-*.png`.
 */

/** What the receiver answers: markup, which the attempt's page must show as characters. */
const RECEIVER_ANSWER = `<script>document.title="owned"</script>thanks`;

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let area: RunningArea;
let dispatcher: RunningDispatcher;
let receiver: { server: Server; url: string; received: Received[] };
let org: OrganizationFixture;
let other: OrganizationFixture;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", { allowPrivateNetworks: true });
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  other = await createOrganization(area.db, "Other Kitchen Ltd");
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "text/html" }).end(RECEIVER_ANSWER);
    });
  });
  const port = await freePort();
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  receiver = { server, url: `http://127.0.0.1:${port}/platter/webhooks`, received };
  // The dispatcher as `npm start` runs it (local receivers allowed), on the area's database.
  dispatcher = await startDispatcher(
    loadDispatcherConfig({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true", DISPATCHER_OPS_PORT: "0", HOST: "127.0.0.1", DISPATCHER_POLL_INTERVAL: "200ms" }),
    pino({ level: "silent" }),
    area.db.runtime,
  );
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await dispatcher?.stop();
  receiver?.server.closeAllConnections();
  await new Promise((done) => receiver?.server.close(done));
  await area?.stop();
});

const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });
const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}webhooks-${name}.png`, fullPage: true });

/** The Standard Webhooks headers of a received request. */
const standardHeaders = (request: Received) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"]),
});

/** Waits until the receiver got `count` requests. */
const receivedCount = async (page: Page, count: number) => {
  for (let waited = 0; receiver.received.length < count; waited += 100) {
    if (waited > 15_000) throw new Error(`the receiver got ${receiver.received.length} requests, not ${count}`);
    await page.waitForTimeout(100);
  }
  return receiver.received[count - 1]!;
};

describe("the Webhooks page in a browser", () => {
  it("adds an endpoint on a local receiver, sends it signed test events, rotates its secret and disables it", async () => {
    const { page, problems } = await watchedPage(browser, { clipboardFor: area.origin });
    await signInInBrowser(page, await area.link(org.id));
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await heading(page, "Webhooks");
    await page.getByText("No endpoints yet.").waitFor();
    await screenshot(page, "1-empty");

    await page.getByRole("link", { name: "Add endpoint" }).click();
    await heading(page, "Add an endpoint");
    // First with nothing entered and nothing ticked: both fields say what is missing.
    await page.getByRole("radio", { name: /Only the types ticked below/ }).check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Enter the URL that should receive the webhooks").waitFor();
    await page.getByText("Pick at least one event type, or choose every event type").waitFor();
    await screenshot(page, "2-add-errors");

    await page.getByLabel("Endpoint URL").fill(receiver.url);
    await page.getByRole("checkbox", { name: /invoice\.paid/ }).check();
    await page.getByRole("checkbox", { name: /client\.created/ }).check();
    await screenshot(page, "3-add-form");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await heading(page, receiver.url);
    await page.getByRole("status").filter({ hasText: "Endpoint added." }).waitFor();
    await screenshot(page, "4-endpoint-added");

    await page.getByRole("button", { name: "Reveal secret" }).click();
    const secret = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await screenshot(page, "5-secret-revealed");

    // A test event of a type of the catalog, delivered by the running dispatcher.
    await page.getByLabel("Event type").selectOption("invoice.paid");
    await page.getByRole("button", { name: "Send test event" }).click();
    await heading(page, "Test event invoice.paid");
    const first = await receivedCount(page, 1);
    const envelope = new Webhook(secret).verify(first.body, standardHeaders(first)) as { id: string; type: string; data: unknown };
    expect(envelope.type).toBe("invoice.paid");
    expect(envelope.data).toEqual(exampleMessage("invoice.paid").data);
    // The page refreshes by itself until the attempt is there.
    await page.locator(".badge", { hasText: "Delivered" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("dd code").first().textContent()).toBe(envelope.id);
    const attempt = page.locator("table.attempts tbody tr");
    expect(await attempt.count()).toBe(1);
    expect(await attempt.locator("td").nth(2).textContent()).toBe("200");
    expect(await attempt.locator("pre.body-excerpt").textContent()).toBe(RECEIVER_ANSWER);
    expect(await page.title()).toBe("Test event · Platter Developer area");
    await screenshot(page, "6-test-event-delivered");

    // Rotation: the new secret signs from now on, the old one beside it during the overlap.
    await page.getByRole("link", { name: "Back to the endpoint" }).click();
    await page.getByRole("link", { name: "Rotate secret…" }).click();
    await heading(page, "Rotate the signing secret?");
    await screenshot(page, "7-confirm-rotate");
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("status").filter({ hasText: "The signing secret was rotated." }).waitFor();
    const rotated = await page.getByRole("textbox", { name: "Signing secret" }).inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await screenshot(page, "8-secret-rotated");

    await page.getByLabel("Event type").selectOption("client.created");
    await page.getByRole("button", { name: "Send test event" }).click();
    await heading(page, "Test event client.created");
    const second = await receivedCount(page, 2);
    expect(String(second.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const key of [rotated, secret]) expect(new Webhook(key).verify(second.body, standardHeaders(second))).toMatchObject({ type: "client.created" });
    await page.locator(".badge", { hasText: "Delivered" }).waitFor({ timeout: 15_000 });

    // Disabled by hand: said on the endpoint and in the list, which shows the last day's health.
    await page.getByRole("link", { name: "Back to the endpoint" }).click();
    await page.getByRole("button", { name: "Disable endpoint" }).click();
    await page.getByRole("status").filter({ hasText: "Endpoint disabled" }).waitFor();
    expect(await page.getByRole("button", { name: "Send test event" }).isDisabled()).toBe(true);
    await screenshot(page, "9-endpoint-disabled");
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await heading(page, "Webhooks");
    const row = page.locator("table.endpoints tbody tr");
    expect(await row.count()).toBe(1);
    expect(await row.locator("td").nth(2).textContent()).toContain("Disabled by hand in the Developer area.");
    expect(await row.locator("td").nth(3).textContent()).toContain("100 % of 2 attempts");
    await screenshot(page, "10-list");
    expect(receiver.received).toHaveLength(2);
    expect(problems).toEqual([]);
  });

  it("shows another organization's session none of it", async () => {
    const { page, problems } = await watchedPage(browser, { clipboardFor: area.origin });
    await signInInBrowser(page, await area.link(other.id));
    await page.goto(`${area.origin}/webhooks`);
    await heading(page, "Webhooks");
    await page.getByText("No endpoints yet.").waitFor();
    expect(await page.content()).not.toContain(receiver.url);
    await screenshot(page, "11-other-organization");
    const [{ id }] = (await area.db.orm.em.getConnection().execute<{ id: string }[]>(
      "select id from webhook_endpoints where organization_id = ?", [org.id],
    )) as [{ id: string }];
    const foreign = await page.goto(`${area.origin}/webhooks/${id}`);
    expect(foreign?.status()).toBe(404);
    await heading(page, "Page not found");
    await screenshot(page, "12-other-organization-404");
    expect(problems).toEqual([]);
  });
});
