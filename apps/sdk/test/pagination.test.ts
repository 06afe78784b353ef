import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client, Event, ListPage } from "../src/index.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { insertClients, insertEvents, type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/** Auto-pagination over 1,000+ records: every record exactly once, in the endpoint's order, page by page. */

const CLIENTS = 1_234;
const EVENTS = 1_050;

let bed: SdkTestbed;
let proxy: FaultProxy;
let clientIds: number[];
let eventIds: number[];

beforeAll(async () => {
  bed = await startSdkTestbed();
  clientIds = await insertClients(bed.sql, bed.org.id, CLIENTS);
  eventIds = await insertEvents(bed.sql, bed.org.id, EVENTS);
  proxy = await startFaultProxy(bed.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await bed?.close();
});

/** A client through the recording proxy, so tests can count the pages requested. */
const viaProxy = () => {
  proxy.reset();
  return bed.platter({ baseUrl: proxy.baseUrl });
};
const requestedUrls = () => proxy.requests.map((r) => new URL(r.url, "http://x"));

const byName = (a: Client, b: Client) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);
const newestFirst = (a: Event, b: Event) => (a.created_at > b.created_at ? -1 : a.created_at < b.created_at ? 1 : b.id - a.id);

describe("for await (const record of list())", () => {
  it(`walks all ${CLIENTS} clients, each once, by name`, async () => {
    const platter = viaProxy();
    const seen: Client[] = [];
    for await (const client of platter.clients.list()) seen.push(client);
    expect(seen).toHaveLength(CLIENTS);
    expect(new Set(seen.map((c) => c.id))).toEqual(new Set(clientIds));
    expect(seen).toEqual([...seen].sort(byName));
    // Default page size 100: 13 pages, the first without a cursor, each next one with the previous next_cursor.
    expect(proxy.requests).toHaveLength(Math.ceil(CLIENTS / 100));
    expect(requestedUrls()[0]!.searchParams.has("cursor")).toBe(false);
    expect(requestedUrls().slice(1).every((url) => url.searchParams.get("cursor"))).toBe(true);
  });

  it(`walks all ${EVENTS} events, each once, newest first, ties by id`, async () => {
    const events = await bed.platter().events.list({ limit: 500 }).toArray();
    expect(events.map((e) => e.id).sort((a, b) => a - b)).toEqual([...eventIds].sort((a, b) => a - b));
    expect(events).toEqual([...events].sort(newestFirst));
  });

  it("stops fetching when the loop breaks", async () => {
    const platter = viaProxy();
    let count = 0;
    for await (const _client of platter.clients.list({ limit: 50 })) {
      if (++count === 120) break;
    }
    expect(count).toBe(120);
    expect(proxy.requests).toHaveLength(3);
  });

  it("starts a fresh walk on every iteration", async () => {
    const list = bed.platter().clients.list({ limit: 400 });
    const first = await list.toArray();
    const second = await list.toArray();
    expect(second).toEqual(first);
    expect(first).toHaveLength(CLIENTS);
  });
});

describe("list({ limit })", () => {
  it.each([
    [1, 1],
    [37, 37],
    [500, 500],
    [5_000, 500],
  ])("limit %i asks for pages of %i", async (limit, pageSize) => {
    const platter = viaProxy();
    const pages = platter.clients.list({ limit }).pages();
    const first = (await pages.next()).value as ListPage<Client>;
    expect(first.data).toHaveLength(pageSize);
    expect(first.has_more).toBe(true);
    expect(requestedUrls()[0]!.searchParams.get("limit")).toBe(String(limit));
  });
});

describe("pages()", () => {
  it("yields every page in order; only the last says has_more: false", async () => {
    const pages: ListPage<Client>[] = [];
    for await (const page of bed.platter().clients.list({ limit: 100 }).pages()) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([...Array<number>(12).fill(100), 34]);
    expect(pages.map((p) => p.has_more)).toEqual([...Array<boolean>(12).fill(true), false]);
    expect(pages.at(-1)!.next_cursor).toBeNull();
    expect(pages.flatMap((p) => p.data.map((c) => c.id))).toHaveLength(CLIENTS);
  });

  it("yields one empty page for an organization without records", async () => {
    const empty = await bed.newOrganization("Empty");
    const platter = bed.platter({ apiKey: empty.readKey });
    const pages: ListPage<Client>[] = [];
    for await (const page of platter.clients.list().pages()) pages.push(page);
    expect(pages).toEqual([{ data: [], has_more: false, next_cursor: null }]);
    expect(await platter.events.list().toArray()).toEqual([]);
  });

  it.each([2.5, -1, Number.NaN])("refuses toArray({ max: %s }) with a TypeError", async (max) => {
    await expect(bed.platter().clients.list().toArray({ max })).rejects.toBeInstanceOf(TypeError);
  });
});

describe("list({ cursor })", () => {
  it("continues after the page the cursor came from", async () => {
    const platter = bed.platter();
    const firstPage = (await platter.clients.list({ limit: 200 }).pages().next()).value as ListPage<Client>;
    const rest = await platter.clients.list({ limit: 300, cursor: firstPage.next_cursor! }).toArray();
    expect([...firstPage.data, ...rest]).toEqual(await platter.clients.list({ limit: 500 }).toArray());
  });
});

describe("toArray({ max })", () => {
  it("collects the first max records and fetches only the pages it needs", async () => {
    const platter = viaProxy();
    const first250 = await platter.clients.list({ limit: 100 }).toArray({ max: 250 });
    expect(first250).toHaveLength(250);
    expect(proxy.requests).toHaveLength(3);
    expect(first250).toEqual((await bed.platter().clients.list({ limit: 500 }).toArray()).slice(0, 250));
  });

  it("answers an empty array for max 0 without a request", async () => {
    const platter = viaProxy();
    expect(await platter.clients.list().toArray({ max: 0 })).toEqual([]);
    expect(proxy.requests).toHaveLength(0);
  });

  it("answers everything when max exceeds the total", async () => {
    expect(await bed.platter().events.list({ limit: 500 }).toArray({ max: 10_000 })).toHaveLength(EVENTS);
  });
});
