import { seedDemo } from "@platter/application";
import { ApiKeyRepository, Sandboxes } from "@platter/persistence";
import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import { walkList } from "./list-walk.ts";

/**
 * A sandbox's keys (`platter_test_…`) against the API: authenticated like any key, they see the
 * sandbox's data only (it is an organization of its own), and the live organization's keys never
 * see the sandbox's. Both hold the same demo data, so only the ids can tell them apart.
 */

const PATHS = ["/v1/events", "/v1/recipes", "/v1/clients", "/v1/invoices"];

let api: ApiUnderTest;
let live: OrganizationFixture;
let sandboxId: number;
let sandboxRead: string;
let sandboxWrite: string;
beforeAll(async () => {
  api = await startApiUnderTest();
  live = await api.newOrganization("Riverside Catering", "EUR");
  await api.db.run(Sandboxes.use((s) => s.open(live.scope, seedDemo)));
  const sandbox = await api.db.run(Sandboxes.use((s) => s.linkedScope(live.scope)));
  sandboxId = sandbox.organizationId;
  sandboxRead = (await api.db.run(ApiKeyRepository.use((keys) => keys.create(sandbox, "read")))).key;
  sandboxWrite = (await api.db.run(ApiKeyRepository.use((keys) => keys.create(sandbox, "read_write")))).key;
  // The live organization has records of its own too.
  for (const path of ["/v1/events", "/v1/clients"]) {
    expect((await api.call("POST", path, { key: live.writeKey, body: { name: "Live record" } })).status).toBe(201);
  }
});
afterAll(() => api?.close());

const idsOf = async (organizationId: number, table: string) =>
  (await api.sql<{ id: string }>(`select id from ${table} where organization_id = ? order by id`, [organizationId])).map((row) => Number(row.id));

describe("a sandbox's keys", () => {
  it("are platter_test_ keys, and /v1/me names the sandbox", async () => {
    expect(sandboxRead).toMatch(/^platter_test_ro_[0-9a-f]{64}$/);
    expect(sandboxWrite).toMatch(/^platter_test_rw_[0-9a-f]{64}$/);
    const me = await api.call("GET", "/v1/me", { key: sandboxRead });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: sandboxId, name: "Riverside Catering (sandbox)", currency: "EUR" });
  });

  it.each(PATHS)("see only the sandbox's records on %s; the live keys never see one", async (path) => {
    const table = path.slice(4);
    const sandboxIds = await idsOf(sandboxId, table);
    const liveIds = await idsOf(live.id, table);
    expect(sandboxIds.length).toBeGreaterThan(0);
    const seenBySandbox = (await walkList(api, path, sandboxRead, 50)).rows.map((row) => row.id as number).sort((x, y) => x - y);
    expect(seenBySandbox).toEqual(sandboxIds);
    for (const key of [live.readKey, live.writeKey]) {
      const seenByLive = (await walkList(api, path, key, 50)).rows.map((row) => row.id as number).sort((x, y) => x - y);
      expect(seenByLive).toEqual(liveIds);
      expect(seenByLive.filter((id) => sandboxIds.includes(id))).toEqual([]);
    }
  });

  it("create in the sandbox only, and a live key cannot read what they created", async () => {
    const created = await api.call("POST", "/v1/events", { key: sandboxWrite, body: { name: "Sandbox tasting" } });
    expect(created.status).toBe(201);
    expect(await api.sql("select organization_id from events where id = ?", [created.body.id])).toEqual([{ organization_id: String(sandboxId) }]);
    expect((await api.call("GET", `/v1/events/${created.body.id}`, { key: live.readKey })).status).toBe(404);
    expect((await api.call("GET", `/v1/events/${created.body.id}`, { key: sandboxRead })).status).toBe(200);
  });

  it("are refused once revoked, like any key (no sandbox bypass)", async () => {
    const sandbox = await api.db.run(Sandboxes.use((s) => s.linkedScope(live.scope)));
    const key = await api.db.run(ApiKeyRepository.use((keys) => keys.create(sandbox, "read")));
    await api.db.run(ApiKeyRepository.use((keys) => keys.revoke(sandbox, key.id)));
    expect((await api.call("GET", "/v1/me", { key: key.key })).status).toBe(401);
  });
});
