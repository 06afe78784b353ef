import { HistoryPartitions, REQUEST_HISTORY, RequestLog } from "@platter/persistence";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, SCREENSHOTS, watchedPage } from "./browser-harness.ts";
import { type RunningArea, signIn, signInInBrowser, startArea, type TestSession } from "./developer-area-harness.ts";

/**
 * The Request log page: the organization's own requests only, newest first, filtered by status
 * class, key, route, time and request id (what an SDK error carries), page by page; bad filters
 * are a 400 page saying which field; another organization's key is a 404. In a browser too.
 */

let area: RunningArea;
let a: OrganizationFixture;
let b: OrganizationFixture;
let session: TestSession;
let browser: Browser;

/** 60 requests of A (every fourth a 404), one failing request of B. */
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  a = await createOrganization(area.db, "Requests of A Catering");
  b = await createOrganization(area.db, "Requests of B Catering");
  const start = Date.parse("2026-11-20T10:00:00.000Z");
  // The log is partitioned by time: partitions back to then (the migration made them back to yesterday).
  await area.db.run(HistoryPartitions.use((h) => h.cover(REQUEST_HISTORY, new Date(start), 24 * 3600_000)));
  await area.db.run(RequestLog.use((log) => log.append([
    ...Array.from({ length: 60 }, (_, i) => ({
      organization_id: a.id, api_key_id: i % 2 === 0 ? a.readKeyId : a.writeKeyId, at: new Date(start + i * 60_000).toISOString(),
      method: "GET", route: i % 4 === 3 ? "/v1/events/:id" : "/v1/events", status: i % 4 === 3 ? 404 : 200, duration_ms: 3.5,
      request_id: `req_a_${i}`, error: i % 4 === 3 ? "Not found" : null,
    })),
    {
      organization_id: b.id, api_key_id: b.readKeyId, at: new Date(start).toISOString(), method: "GET", route: "/v1/me", status: 500,
      duration_ms: 9, request_id: "req_b_only", error: "Internal server error",
    },
  ])));
  session = await signIn(area, await area.link(a.id));
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await area?.stop();
});

const getPage = (path: string) => fetch(area.origin + path, { headers: { cookie: session.cookie }, redirect: "manual" });
const requestIds = (page: string) => [...page.matchAll(/>(req_[a-z]_\d+|req_b_only)<\/a>/g)].map((match) => match[1]);

describe("the Request log page", () => {
  it("lists the organization's own requests, newest first, 50 to a page, with an Older link to the rest", async () => {
    const response = await getPage("/requests");
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(requestIds(page)).toEqual(Array.from({ length: 50 }, (_, i) => `req_a_${59 - i}`));
    expect(page).not.toContain("req_b_only");
    const older = /href="(\/requests\?cursor=[^"]+)"/.exec(page)?.[1];
    expect(older).toBeDefined();
    const rest = await (await getPage(older!.replaceAll("&amp;", "&"))).text();
    expect(requestIds(rest)).toEqual(Array.from({ length: 10 }, (_, i) => `req_a_${9 - i}`));
  });

  it.each([
    ["status=4xx", Array.from({ length: 15 }, (_, i) => `req_a_${59 - 4 * i}`)],
    ["request=req_a_7", ["req_a_7"]],
    ["route=%2Fv1%2Fevents%2F%3Aid&from=2026-11-20T10:50", ["req_a_59", "req_a_55", "req_a_51"]],
    ["status=5xx", []],
  ])("filters by %s", async (query, expected) => {
    const response = await getPage(`/requests?${query}`);
    expect(response.status).toBe(200);
    expect(requestIds(await response.text())).toEqual(expected);
  });

  it("filters by key", async () => {
    const page = await (await getPage(`/requests?key=${a.writeKeyId}&status=2xx`)).text();
    const ids = requestIds(page);
    expect(ids.length).toBe(15);
    expect(ids.every((id) => Number(id!.slice("req_a_".length)) % 2 === 1)).toBe(true);
  });

  it.each([
    ["status=3xx", "status must be 2xx, 4xx or 5xx"],
    ["route=%2Fv2%2Fevents", "route must be one of the API&#39;s routes"],
    ["request=%3Cscript%3E", "request must be a request id (letters, digits, _ . : -)"],
    ["from=yesterday", "from must be a time written YYYY-MM-DDTHH:MM (UTC)"],
    ["cursor=broken", "This page link is not valid: start again from the newest requests."],
  ])("refuses %s with 400, saying why", async (query, message) => {
    const response = await getPage(`/requests?${query}`);
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(message);
    expect(requestIds(page)).toEqual([]);
  });

  it("answers another organization's key with the 404 page", async () => {
    expect((await getPage(`/requests?key=${b.readKeyId}`)).status).toBe(404);
  });

  it("finds a request by the id an error carried, in a browser, at 1280 and 390 px", async () => {
    const { page, problems } = await watchedPage(browser);
    await signInInBrowser(page, await area.link(a.id));
    await page.getByRole("link", { name: "Request log" }).click();
    await page.getByRole("heading", { level: 1, name: "Request log" }).waitFor();
    await page.getByLabel("Request id").fill("req_a_11");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL((url) => url.searchParams.get("request") === "req_a_11");
    const rows = page.locator("table.requests tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("Not found");
    await page.screenshot({ path: `${SCREENSHOTS}requests-1280.png`, fullPage: true });
    await page.goto(`${area.origin}/requests`);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SCREENSHOTS}requests-390.png`, fullPage: true });
    expect(await page.locator("html").evaluate((root) => root.scrollWidth)).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
    await page.close();
  });
});
