import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import { listPage, walkList } from "./list-walk.ts";
import { LISTED_RESOURCES, tiedKeys } from "./listed-resources.ts";

/** A key gives access to the records of its own organization only, in every list and on /me. */

let api: ApiUnderTest;
let alpha: OrganizationFixture;
let beta: OrganizationFixture;
/** Ids per organization per list endpoint. */
const owned = new Map<string, Set<number>>();
const ownedBy = (org: OrganizationFixture, resource: string) => owned.get(`${org.id}/${resource}`)!;

beforeAll(async () => {
  api = await startApiUnderTest();
  alpha = await api.newOrganization("Alpha Catering", "EUR");
  beta = await api.newOrganization("Beta Catering", "GBP");
  // Interleaved inserts with identical sort keys, so the two organizations' rows sit side by side in every index.
  for (const resource of LISTED_RESOURCES) {
    for (const org of [alpha, beta]) owned.set(`${org.id}/${resource.name}`, new Set());
    for (let round = 0; round < 3; round++) {
      for (const org of [alpha, beta]) {
        const ids = await resource.insert(api.sql, org.id, tiedKeys(15));
        ids.forEach((id) => ownedBy(org, resource.name).add(id));
      }
    }
  }
  for (const org of [alpha, beta]) {
    for (const path of ["/v1/events", "/v1/clients"]) {
      const created = await api.call("POST", path, { key: org.writeKey, body: { name: `Created by ${org.id}` } });
      expect(created.status).toBe(201);
      ownedBy(org, path.slice(4)).add(created.body.id);
    }
  }
});
afterAll(() => api?.close());

describe.each(LISTED_RESOURCES)("GET $path", (resource) => {
  it.each([
    ["Alpha", () => alpha, () => beta],
    ["Beta", () => beta, () => alpha],
  ])("shows %s's key its own rows, all of them, and nothing else", async (_name, own, other) => {
    for (const key of [own().readKey, own().writeKey]) {
      const walk = await walkList(api, resource.path, key, 10);
      const seen = walk.rows.map((row) => row.id as number).sort((a, b) => a - b);
      expect(seen).toEqual([...ownedBy(own(), resource.name)].sort((a, b) => a - b));
      expect(seen.filter((id) => ownedBy(other(), resource.name).has(id))).toEqual([]);
    }
  });

  it("scopes another organization's cursor to the caller: it never reveals the other's rows", async () => {
    const betaPage = await listPage(api, resource.path, beta.readKey, { limit: 5 });
    const walk: any[] = [];
    let cursor: string | undefined = betaPage.body.next_cursor;
    while (cursor !== undefined) {
      const page = await listPage(api, resource.path, alpha.readKey, { limit: 7, cursor });
      walk.push(...page.body.data);
      cursor = page.body.has_more ? page.body.next_cursor : undefined;
    }
    expect(walk.length).toBeGreaterThan(0);
    for (const row of walk) expect(ownedBy(alpha, resource.name).has(row.id)).toBe(true);
  });
});

describe("GET /v1/me", () => {
  it.each([
    ["Alpha", () => alpha, "Alpha Catering", "EUR"],
    ["Beta", () => beta, "Beta Catering", "GBP"],
  ])("answers %s's keys with %s's organization", async (_name, org, name, currency) => {
    for (const key of [org().readKey, org().writeKey]) {
      const response = await api.call("GET", "/v1/me", { key });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: org().id, name, currency });
    }
  });
});

describe("creates", () => {
  it("store records in the key's organization and show amounts in its currency", async () => {
    const created = await api.call("POST", "/v1/events", { key: beta.writeKey, body: { name: "Beta dinner", price_per_head: 30.5 } });
    expect(created.status).toBe(201);
    const [row] = await api.sql<{ organization_id: string }>("select organization_id from events where id = ?", [created.body.id]);
    expect(Number(row!.organization_id)).toBe(beta.id);
    const shown = await api.call("GET", `/v1/events/${created.body.id}`, { key: beta.readKey });
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ price_per_head: 30.5, currency: "GBP" });
    const hidden = await api.call("GET", `/v1/events/${created.body.id}`, { key: alpha.readKey });
    expect(hidden.status).toBe(404);
  });

  it("write the outbox row under the key's organization", async () => {
    const created = await api.call("POST", "/v1/clients", { key: alpha.writeKey, body: { name: "Alpha guest" } });
    expect(created.status).toBe(201);
    const rows = await api.sql<{ organization_id: string }>(
      "select organization_id from webhook_messages where type = 'client.created' and (payload->'data'->>'id')::bigint = ?",
      [created.body.id],
    );
    expect(rows.map((row) => Number(row.organization_id))).toEqual([alpha.id]);
  });
});
