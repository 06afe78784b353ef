import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import { expectOrdered, listPage, walkList } from "./list-walk.ts";
import { LISTED_RESOURCES, randomKeys, seededRandom, tiedKeys } from "./listed-resources.ts";

/** Limits, envelope, order and keyset paging: one table over the four list endpoints. */

let api: ApiUnderTest;
beforeAll(async () => {
  api = await startApiUnderTest();
});
afterAll(() => api?.close());

describe.each(LISTED_RESOURCES)("GET $path ($order)", (resource) => {
  const SEEDED = 520;
  let org: OrganizationFixture;
  let seededIds: number[];
  beforeAll(async () => {
    org = await api.newOrganization(`Paging ${resource.name}`);
    seededIds = await resource.insert(api.sql, org.id, tiedKeys(SEEDED));
  });

  it("answers an empty organization with an empty last page", async () => {
    const empty = await api.newOrganization("Empty");
    const page = await listPage(api, resource.path, empty.readKey);
    expect(page.body).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it.each([
    ["absent", undefined],
    ["zero", "0"],
    ["negative", "-1"],
    ["non-numeric", "abc"],
    ["fractional", "1.5"],
    ["empty", ""],
    ["digits then letters", "10abc"],
  ])("uses the default limit of 100 when limit is %s", async (_case, limit) => {
    const page = await listPage(api, resource.path, org.readKey, limit === undefined ? {} : { limit });
    expect(page.body.data).toHaveLength(100);
    expect(page.body.has_more).toBe(true);
  });

  it.each([
    [1, 1],
    [2, 2],
    [499, 499],
    [500, 500],
    [501, 500],
    [100_000, 500],
    ["99999999999999999999999", 500],
  ])("limit=%s returns %i rows", async (limit, expected) => {
    const page = await listPage(api, resource.path, org.readKey, { limit });
    expect(page.body.data).toHaveLength(expected);
    expect(page.body.has_more).toBe(true);
  });

  it("ends with has_more false and next_cursor null when the rest fits on the page", async () => {
    const page = await listPage(api, resource.path, org.readKey, { limit: 500 });
    const last = await listPage(api, resource.path, org.readKey, { limit: 500, cursor: page.body.next_cursor });
    expect(last.body.data).toHaveLength(SEEDED - 500);
    expect(last.body.has_more).toBe(false);
    expect(last.body.next_cursor).toBeNull();
  });

  it("ends with has_more false when the last page is exactly full", async () => {
    const page = await listPage(api, resource.path, org.readKey, { limit: 260 });
    expect(page.body.has_more).toBe(true);
    const last = await listPage(api, resource.path, org.readKey, { limit: 260, cursor: page.body.next_cursor });
    expect(last.body.data).toHaveLength(260);
    expect(last.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it(`lists every row once, ${resource.order}, with ties of the sort key broken by id`, async () => {
    const walk = await walkList(api, resource.path, org.readKey, 7);
    expect(walk.rows.map((row) => row.id).sort((a, b) => a - b)).toEqual([...seededIds].sort((a, b) => a - b));
    expectOrdered(walk.rows, resource.precedes);
    expect(walk.pages).toBe(Math.ceil(SEEDED / 7));
  });

  it("gives the same order whatever the page size", async () => {
    const single = await listPage(api, resource.path, org.readKey, { limit: 500 });
    const small = await walkList(api, resource.path, org.readKey, 3);
    expect(small.rows.slice(0, 500).map((row) => row.id)).toEqual(single.body.data.map((row: any) => row.id));
  });

  it("accepts a different limit with a cursor", async () => {
    const first = await listPage(api, resource.path, org.readKey, { limit: 10 });
    const next = await listPage(api, resource.path, org.readKey, { limit: 25, cursor: first.body.next_cursor });
    const reference = await listPage(api, resource.path, org.readKey, { limit: 35 });
    expect(next.body.data.map((row: any) => row.id)).toEqual(reference.body.data.slice(10).map((row: any) => row.id));
  });

  it("sees every row that exists for the whole walk exactly once while 1,000+ rows are inserted and deleted around it", async () => {
    const random = seededRandom(resource.name.length * 7919);
    const walker = await api.newOrganization(`Walk ${resource.name}`);
    const KEY_RANGE = 700;
    const stable = new Set(await resource.insert(api.sql, walker.id, randomKeys(random, 1_050, KEY_RANGE)));
    let volatile = await resource.insert(api.sql, walker.id, randomKeys(random, 150, KEY_RANGE));
    const everInserted = new Set([...stable, ...volatile]);

    const walk = await walkList(api, resource.path, walker.readKey, 61, async () => {
      // Insert rows everywhere in the order (ahead of and behind the cursor) and delete some that came and went.
      const added = await resource.insert(api.sql, walker.id, randomKeys(random, 8, KEY_RANGE));
      added.forEach((id) => everInserted.add(id));
      volatile.push(...added);
      const doomed = volatile.filter(() => random() < 0.08);
      await resource.remove(api.sql, doomed);
      volatile = volatile.filter((id) => !doomed.includes(id));
    });

    const seen = walk.rows.map((row) => row.id as number);
    expect(new Set(seen).size).toBe(seen.length);
    const missing = [...stable].filter((id) => !seen.includes(id));
    expect(missing).toEqual([]);
    expect(seen.filter((id) => !everInserted.has(id))).toEqual([]);
    expectOrdered(walk.rows, resource.precedes);
    expect(walk.pages).toBeGreaterThanOrEqual(18);
  });
});

describe("tie-breaks seen through the API", () => {
  it("lists events created in the same millisecond by id, newest (highest) first", async () => {
    const org = await api.newOrganization("Same instant");
    const rows = await api.sql<{ id: string }>(
      `insert into events (organization_id, name, created_at)
       select ?, 'Same instant ' || g, timestamptz '2026-05-01T12:00:00.123Z' from generate_series(1, 5) g returning id`,
      [org.id],
    );
    const ids = rows.map((row) => Number(row.id)).sort((a, b) => b - a);
    const walk = await walkList(api, "/v1/events", org.readKey, 2);
    expect(walk.rows.map((row) => row.id)).toEqual(ids);
    expect(new Set(walk.rows.map((row) => row.created_at))).toEqual(new Set(["2026-05-01T12:00:00.123Z"]));
  });

  it("lists invoices created in the same millisecond by id, newest (highest) first", async () => {
    const org = await api.newOrganization("Same instant invoices");
    const rows = await api.sql<{ id: string }>(
      `insert into invoices (organization_id, number, currency, issue_date, due_date, created_at)
       select ?, 'SAME-' || g, 'EUR', date '2026-05-01', date '2026-05-31', timestamptz '2026-05-01T12:00:00.123Z'
       from generate_series(1, 5) g returning id`,
      [org.id],
    );
    const ids = rows.map((row) => Number(row.id)).sort((a, b) => b - a);
    const walk = await walkList(api, "/v1/invoices", org.readKey, 2);
    expect(walk.rows.map((row) => row.id)).toEqual(ids);
  });

  it.each(["clients", "recipes"])("lists %s with the same name by id, lowest first", async (table) => {
    const org = await api.newOrganization(`Same name ${table}`);
    const servings = table === "recipes" ? ", servings" : "";
    const rows = await api.sql<{ id: string; name: string }>(
      `insert into ${table} (organization_id, name${servings})
       select ?, case when g % 2 = 0 then 'Twin' else 'Apple' end${table === "recipes" ? ", 2" : ""}
       from generate_series(1, 6) g returning id, name`,
      [org.id],
    );
    const idsNamed = (name: string) => rows.filter((row) => row.name === name).map((row) => Number(row.id)).sort((a, b) => a - b);
    const walk = await walkList(api, `/v1/${table}`, org.readKey, 4);
    expect(walk.rows.map((row) => row.id)).toEqual([...idsNamed("Apple"), ...idsNamed("Twin")]);
  });

  it("lists events newest first across events created through the API", async () => {
    const org = await api.newOrganization("Created in turn");
    const ids: number[] = [];
    for (const name of ["First", "Second", "Third"]) {
      const created = await api.call("POST", "/v1/events", { key: org.writeKey, body: { name } });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    const page = await listPage(api, "/v1/events", org.readKey);
    expect(page.body.data.map((row: any) => row.id)).toEqual(ids.reverse());
  });
});
