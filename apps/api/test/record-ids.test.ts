import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Path ids on the three detail endpoints: anything that does not name a record of the caller's
 * organization is 404, and another organization's record looks exactly like a missing one.
 */

let api: ApiUnderTest;
let mine: OrganizationFixture;
let theirs: OrganizationFixture;
const ownIds = new Map<string, number>();
const theirIds = new Map<string, number>();

const DETAIL_ENDPOINTS = ["events", "recipes", "invoices"] as const;

const insertOne = async (table: string, organizationId: number): Promise<number> => {
  const statements: Record<string, string> = {
    events: "insert into events (organization_id, name) values (?, 'Detail') returning id",
    recipes: "insert into recipes (organization_id, name, servings) values (?, 'Detail', 2) returning id",
    invoices:
      "insert into invoices (organization_id, number, currency, issue_date, due_date) values (?, 'D-' || gen_random_uuid(), 'EUR', '2026-01-01', '2026-01-31') returning id",
  };
  const [row] = await api.sql<{ id: string }>(statements[table]!, [organizationId]);
  return Number(row!.id);
};

beforeAll(async () => {
  api = await startApiUnderTest();
  mine = await api.newOrganization("Mine");
  theirs = await api.newOrganization("Theirs");
  for (const table of DETAIL_ENDPOINTS) {
    ownIds.set(table, await insertOne(table, mine.id));
    theirIds.set(table, await insertOne(table, theirs.id));
  }
});
afterAll(() => api?.close());

describe.each(DETAIL_ENDPOINTS)("GET /v1/%s/{id}", (resource) => {
  const get = (id: string | number, key = mine.readKey) => api.call("GET", `/v1/${resource}/${id}`, { key });

  it("finds the caller's own record", async () => {
    const response = await get(ownIds.get(resource)!);
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(ownIds.get(resource));
  });

  it("answers another organization's record exactly like a record that does not exist", async () => {
    const missing = await get(theirIds.get(resource)! + 1_000_000);
    const foreign = await get(theirIds.get(resource)!);
    expect(missing.status).toBe(404);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect(foreign.headers.get("content-length")).toBe(missing.headers.get("content-length"));
    // The owner does see it.
    expect((await get(theirIds.get(resource)!, theirs.readKey)).status).toBe(200);
  });

  it("is not an unknown endpoint: a missing record is told apart from a missing path", async () => {
    const response = await get(999_999_999);
    expect(response.status).toBe(404);
    expect(response.body.error).not.toBe("Unknown endpoint");
  });

  it.each([
    ["a nonexistent id", "999999999"],
    ["letters", "abc"],
    ["zero", "0"],
    ["negative", "-1"],
    ["fractional", "1.5"],
    ["exponent", "1e3"],
    ["hexadecimal", "0x10"],
    ["a leading zero", "01"],
    ["a leading plus", "+1"],
    ["whitespace", "%201"],
    ["just beyond the safe integer range", "9007199254740993"],
    ["the largest bigint", "9223372036854775807"],
    ["beyond bigint", "9223372036854775808"],
    ["huge", "9".repeat(40)],
    ["a NUL byte", "1%00"],
    ["SQL", "1%20or%201%3D1"],
    ["unicode digits", "%D9%A1"],
  ])("%s (%s) → 404 with the same body as a missing record", async (_case, id) => {
    const reference = await get(999_999_999);
    const response = await get(id);
    expect(response.status).toBe(404);
    expect(response.body).toEqual(reference.body);
  });
});
