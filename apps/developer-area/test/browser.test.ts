import { makeSignInLink } from "@platter/application";
import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiApp, createApiObservability } from "@platter/api";
import { KeyRateLimits, UNTHROTTLED } from "@platter/ops";
import { createDeveloperAreaApp } from "../src/index.ts";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser, Page } from "playwright-core";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { listen, type RunningArea, signInInBrowser, startArea } from "./developer-area-harness.ts";

/**
 * End to end in a real headless Chromium (the binary ships inside the npm package
 * @sparticuz/chromium; nothing is downloaded): sign in with a link, create a read-only key, use it
 * against the real API, revoke it in the browser and see the API refuse it. Every page is saved as
 * a screenshot under `test-output/` to be looked at.
 */



let area: RunningArea;
let api: { server: Server; origin: string };
let org: OrganizationFixture;
let browser: Browser;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Harbour Kitchen & Co.");
  const silent = pino({ level: "silent" });
  api = await listen(createApiApp(area.db.runtime, silent, new KeyRateLimits(UNTHROTTLED), createApiObservability(area.db.runtime, silent, false)).callback());
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  api?.server.closeAllConnections();
  await new Promise((done) => api?.server.close(done));
  await area?.stop();
});

const callApi = async (method: "GET" | "POST", path: string, key: string) => {
  const response = await fetch(api.origin + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    ...(method === "POST" ? { body: JSON.stringify({ name: "Browser-made client" }) } : {}),
  });
  return response.status;
};

/** Waits for the page whose main heading is `text` (fails after Playwright's timeout otherwise). */
const heading = (page: Page, text: string) => page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor({ timeout: 10_000 });

const screenshot = (page: Page, name: string) => page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });

describe("the Developer area in a browser", () => {
  it("signs in with a link, creates a read-only key that the API accepts for reads only, and revokes it", async () => {
    // Anything the CSP blocks, a resource that fails to load, or a script error shows up in `problems`.
    const { page, problems } = await watchedPage(browser, { clipboardFor: area.origin });

    const link = await area.link(org.id);
    // Opening the link shows where it leads; only the button uses it (a link preview's GET would not).
    const landing = await page.goto(link);
    expect(landing?.status()).toBe(200);
    await heading(page, "Continue to the Developer area of Harbour Kitchen & Co.");
    await screenshot(page, "0-sign-in-continue");
    await page.getByRole("button", { name: "Continue" }).click();
    await page.waitForURL((url) => url.pathname === "/api-keys");
    expect(await page.locator(".topbar-org").textContent()).toContain("Harbour Kitchen & Co.");
    await screenshot(page, "1-api-keys");

    // The form, by its labels, as a keyboard user would reach it.
    await page.getByLabel("Name").fill("Booking widget (read-only)");
    await page.getByRole("radio", { name: /Read-only/ }).check();
    await page.getByRole("button", { name: "Create key" }).press("Enter");
    await heading(page, "Your new API key");
    const key = await page.getByLabel("API key").inputValue();
    expect(key).toMatch(/^platter_ro_[0-9a-f]{64}$/);
    await page.getByRole("button", { name: "Copy" }).click();
    await page.locator("#copy-status:not(:empty)").waitFor();
    expect(await page.locator("#copy-status").textContent()).toMatch(/^(Copied to the clipboard\.|Selected: press Ctrl\+C \(⌘C\) to copy\.)$/);
    await screenshot(page, "2-new-key");

    expect(await callApi("GET", "/v1/me", key)).toBe(200);
    expect(await callApi("POST", "/v1/clients", key)).toBe(403);

    await page.getByRole("link", { name: "Done" }).click();
    await page.getByRole("cell", { name: "Booking widget (read-only)", exact: true }).waitFor();
    await screenshot(page, "3-api-keys-with-new-key");

    // On a phone (390 px) the keys table scrolls inside its box, and nothing widens the page.
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "3-api-keys-390px");
    expect(await page.locator("html").evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(390);
    const box = (await page.locator(".table-scroll").boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(await page.locator(".table-scroll").evaluate((scroller) => scroller.scrollWidth > scroller.clientWidth)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole("link", { name: "Revoke Booking widget (read-only)" }).click();
    await heading(page, "Revoke this key?");
    await screenshot(page, "4-confirm-revoke");
    await page.getByRole("button", { name: "Revoke key" }).click();
    await page.getByRole("status").filter({ hasText: "was revoked" }).waitFor();
    await screenshot(page, "5-revoked");

    expect(await callApi("GET", "/v1/me", key)).toBe(401);

    // The link was used: opening it again is a clear page, not a second session.
    const reused = await page.goto(link);
    expect(reused?.status()).toBe(410);
    await heading(page, "This sign-in link was already used");
    await screenshot(page, "6-link-already-used");

    await page.goto(`${area.origin}/api-keys`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await heading(page, "You are signed out");
    await screenshot(page, "7-signed-out");
    const afterSignOut = await page.goto(`${area.origin}/api-keys`);
    expect(afterSignOut?.status()).toBe(401);
    await screenshot(page, "8-sign-in-required");

    expect(problems).toEqual([]);
    // The context stays open until the browser closes: the package's Chromium is one process, which ends with the first context closed.
    await page.close();
  });

  it("creates a key that expires, rolls it with an overlap, and the API takes both secrets until the old one's overlap ends", async () => {
    const { page, problems } = await watchedPage(browser, { clipboardFor: area.origin });
    await signInInBrowser(page, await area.link(org.id));
    await page.getByLabel("Name").fill("Kitchen display");
    await page.getByRole("radio", { name: /Read-only/ }).check();
    await page.getByLabel("Expires").selectOption("90d");
    await page.getByRole("button", { name: "Create key" }).click();
    await heading(page, "Your new API key");
    const first = await page.getByLabel("API key").inputValue();
    await page.getByRole("link", { name: "Done" }).click();
    const row = page.getByRole("row").filter({ hasText: "Kitchen display" });
    await row.waitFor();
    expect(await row.locator("td").nth(5).textContent()).toContain("expires");
    expect(await row.locator("td").nth(5).locator("time").getAttribute("datetime")).toMatch(/^\d{4}-\d\d-\d\dT/);
    // Every key's actions are in view at 1280 px, without scrolling the table.
    const actions = (await row.getByRole("link", { name: "Revoke Kitchen display" }).boundingBox())!;
    const panel = (await page.locator(".table-scroll").boundingBox())!;
    expect(actions.x + actions.width).toBeLessThanOrEqual(panel.x + panel.width);
    await screenshot(page, "10-api-keys-expiring");

    await page.getByRole("link", { name: "Roll Kitchen display" }).click();
    await heading(page, "Roll this key?");
    await screenshot(page, "11-confirm-roll");
    await page.getByRole("radio", { name: "1 hour" }).check();
    await page.getByRole("button", { name: "Roll key" }).click();
    await heading(page, "Your new API key");
    await page.getByRole("status").filter({ hasText: "keeps working until" }).waitFor();
    const second = await page.getByLabel("API key").inputValue();
    expect(second).toMatch(/^platter_ro_[0-9a-f]{64}$/);
    expect(second).not.toBe(first);
    await screenshot(page, "12-rolled-key");
    expect(await callApi("GET", "/v1/me", first)).toBe(200);
    expect(await callApi("GET", "/v1/me", second)).toBe(200);

    // The overlap ends (the row is moved as time would move it): the old secret is refused, the new one goes on.
    await area.db.orm.em.getConnection().execute(
      "update api_keys set expires_at = now() - interval '1 second' where name = 'Kitchen display' and replaced_by is not null",
    );
    expect(await callApi("GET", "/v1/me", first)).toBe(401);
    expect(await callApi("GET", "/v1/me", second)).toBe(200);
    await page.getByRole("link", { name: "Done" }).click();
    await page.getByRole("row").filter({ hasText: "Kitchen display" }).filter({ hasText: "Rolled" }).waitFor();
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "13-api-keys-rolled-390px");
    expect(await page.locator("html").evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("works inside a frame on another site when served over https: the partitioned cookie comes back and the frame's forms are accepted", async () => {
    // A self-signed certificate for 127.0.0.1 (the browser is told to accept it), and an embedding
    // page on http://localhost: another site, as the catering application would be.
    const dir = await mkdtemp(join(tmpdir(), "platter-area-tls-"));
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
    ], { stdio: "ignore" });
    const tls = { key: await readFile(join(dir, "key.pem")), cert: await readFile(join(dir, "cert.pem")) };
    await rm(dir, { recursive: true });
    const embedder = createHttpServer();
    await new Promise<void>((done) => embedder.listen(0, "127.0.0.1", done));
    const embedderOrigin = `http://localhost:${(embedder.address() as AddressInfo).port}`;
    const secure = createHttpsServer(tls);
    await new Promise<void>((done) => secure.listen(0, "127.0.0.1", done));
    const areaOrigin = `https://127.0.0.1:${(secure.address() as AddressInfo).port}`;
    secure.on("request", createDeveloperAreaApp(area.db.runtime, { developerAreaUrl: areaOrigin, frameAncestors: embedderOrigin }, pino({ level: "silent" })).callback());
    const link = (await area.db.run(makeSignInLink(areaOrigin, org.id, "application"))).url;
    embedder.on("request", (_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><title>Catering app</title><h1>Catering app</h1><iframe src="${link}" style="width:1100px;height:700px"></iframe>`);
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ignoreHTTPSErrors: true });
    const page = await context.newPage();
    try {
      await page.goto(embedderOrigin);
      const frame = page.frameLocator("iframe");
      await frame.getByRole("button", { name: "Continue" }).click();
      // The session cookie came back inside the frame: the keys page, not "Sign in".
      await frame.getByRole("heading", { level: 1, name: "API keys", exact: true }).waitFor({ timeout: 10_000 });
      expect(await frame.locator(".topbar-org").textContent()).toContain("Harbour Kitchen & Co.");
      const [cookie] = await context.cookies(areaOrigin);
      expect(cookie).toMatchObject({ name: "__Host-platter_developer_session", sameSite: "None", secure: true, httpOnly: true, partitionKey: expect.any(String) });
      // A form of the framed page passes the Origin and form-token checks.
      // A name of 100 characters without a space wraps inside the card instead of running out of it.
      const longName = `Made-in-a-frame-${"x".repeat(84)}`;
      await frame.getByLabel("Name").fill(longName);
      await frame.getByRole("button", { name: "Create key" }).click();
      await frame.getByRole("heading", { level: 1, name: "Your new API key", exact: true }).waitFor({ timeout: 10_000 });
      const name = frame.locator(".facts dd").first();
      expect(await name.textContent()).toBe(longName);
      expect(await name.evaluate((dd) => dd.scrollWidth <= dd.clientWidth)).toBe(true);
      await screenshot(page, "9-embedded-new-key");
    } finally {
      await page.close();
      for (const server of [embedder, secure]) {
        server.closeAllConnections();
        await new Promise((done) => server.close(done));
      }
    }
  });
});
