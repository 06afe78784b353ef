import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";
import { walkList } from "./list-walk.ts";

/** Clients: creating (201 `{id}`, one outbox row), validating, and reading back from the list. */

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Clients Catering");
});
afterAll(() => api?.close());

const create = (body: unknown, key = org.writeKey) => api.call("POST", "/v1/clients", { key, body });

const expectCreated = (response: { status: number; body: any; headers: Headers }): number => {
  expect(response.status).toBe(201);
  expect(Object.keys(response.body)).toEqual(["id"]);
  expect(Number.isSafeInteger(response.body.id) && response.body.id > 0).toBe(true);
  expect(response.headers.get("location")).toBe(`/v1/clients/${response.body.id}`);
  return response.body.id;
};

/** GET /clients has no detail endpoint: a client is read back by walking the list. */
const listedClient = async (id: number, key = org.readKey) => {
  const walk = await walkList(api, "/v1/clients", key, 500);
  return walk.rows.find((client) => client.id === id);
};

const countsOf = async (organizationId: number) => {
  const [row] = await api.sql<{ clients: string; outbox: string }>(
    `select (select count(*) from clients where organization_id = ?) as clients,
            (select count(*) from webhook_messages where organization_id = ?) as outbox`,
    [organizationId, organizationId],
  );
  return { clients: Number(row!.clients), outbox: Number(row!.outbox) };
};

describe("POST /v1/clients", () => {
  it("creates a client from a name alone: 201, `{id}`, Location, and the list shows it", async () => {
    const id = expectCreated(await create({ name: "Ada Lovelace" }));
    expect(await listedClient(id)).toMatchObject({ id, name: "Ada Lovelace", email: null, phone: null, company: null });
  });

  it("stores every field and shows it back exactly", async () => {
    const fields = { name: "Grace Hopper", email: "grace@example.com", phone: "+1 (555) 010-0199", company: "Navy Catering Ltd." };
    const id = expectCreated(await create(fields));
    const client = await listedClient(id);
    expect(client).toMatchObject({ id, ...fields });
    expect(client.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("accepts null for every optional field", async () => {
    const id = expectCreated(await create({ name: "Nulls", email: null, phone: null, company: null }));
    expect(await listedClient(id)).toMatchObject({ email: null, phone: null, company: null });
  });

  it("writes exactly one client.created outbox row carrying the new id", async () => {
    const own = await api.newOrganization("Outbox clients");
    const id = expectCreated(await create({ name: "Outboxed", email: "o@example.com" }, own.writeKey));
    const rows = await api.sql<{ type: string; payload: any }>("select type, payload from webhook_messages where organization_id = ?", [own.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.type).toBe("client.created");
    expect(rows[0]!.payload.data).toMatchObject({ id, name: "Outboxed", email: "o@example.com" });
    const second = expectCreated(await create({ name: "Second" }, own.writeKey));
    const after = await api.sql<{ type: string; payload: any }>("select type, payload from webhook_messages where organization_id = ? order by id", [own.id]);
    expect(after.map((row) => [row.type, row.payload.data.id])).toEqual([
      ["client.created", id],
      ["client.created", second],
    ]);
  });

  it("allows two clients with the same name (they are told apart by id)", async () => {
    const first = expectCreated(await create({ name: "Twin" }));
    const second = expectCreated(await create({ name: "Twin" }));
    expect(second).not.toBe(first);
  });

  const invalid: ReadonlyArray<[string, unknown, RegExp]> = [
    ["an empty object", {}, /^name is required$/],
    ["fields but no name", { email: "a@example.com" }, /^name is required$/],
    ["name null", { name: null }, /name/],
    ["name a number", { name: 42 }, /name/],
    ["name a boolean", { name: false }, /name/],
    ["name an object", { name: {} }, /name/],
    ["name empty", { name: "" }, /name/],
    ["name blank", { name: "\t \n" }, /name/],
    ["name over 200 characters", { name: "n".repeat(201) }, /name/],
    ["name with a NUL character", { name: "\u0000" }, /name/],
    ["email not an address", { name: "x", email: "not-an-email" }, /email/],
    ["email without a domain dot", { name: "x", email: "a@b" }, /email/],
    ["email with a space", { name: "x", email: "a b@example.com" }, /email/],
    ["email a number", { name: "x", email: 5 }, /email/],
    ["email with a NUL character", { name: "x", email: "a\u0000@example.com" }, /email/],
    ["email too long", { name: "x", email: `${"a".repeat(250)}@example.com` }, /email/],
    ["phone letters", { name: "x", phone: "call me" }, /phone/],
    ["phone a number", { name: "x", phone: 5550100 }, /phone/],
    ["phone too short", { name: "x", phone: "12" }, /phone/],
    ["company a number", { name: "x", company: 7 }, /company/],
    ["company over 200 characters", { name: "x", company: "c".repeat(201) }, /company/],
    ["company with a NUL character", { name: "x", company: "A\u0000B" }, /company/],
    ["an unknown field", { name: "x", x: 1 }, /^unknown field: x$/],
    ["a field of another resource", { name: "x", guests: 10 }, /^unknown field: guests$/],
    ["a server-side field", { name: "x", organization_id: 1 }, /^unknown field: organization_id$/],
  ];

  it.each(invalid)("refuses %s with 400 naming the problem, and stores nothing", async (_case, body, error) => {
    const before = await countsOf(org.id);
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(error);
    expect(await countsOf(org.id)).toEqual(before);
  });
});

describe("GET /v1/clients", () => {
  it("lists clients by name in byte order (upper case before lower case), then id", async () => {
    const own = await api.newOrganization("Sorted clients");
    for (const name of ["Zed", "alpha", "Beta", "Alpha", "Beta"]) expectCreated(await create({ name }, own.writeKey));
    const walk = await walkList(api, "/v1/clients", own.readKey, 2);
    expect(walk.rows.map((client) => client.name)).toEqual(["Alpha", "Beta", "Beta", "Zed", "alpha"]);
    expect(walk.rows[1].id).toBeLessThan(walk.rows[2].id);
  });
});
