import { generateSigningSecret } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository, DeveloperSessions, IdempotencyKeys, inOneTransaction, type Persistence, Sandboxes, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";
import { seedDemo } from "@platter/application";

/**
 * Sandboxes in storage: one per live organization (opening again changes nothing), the live
 * organization's currency and the data it is given (the application's demo data); a sandbox has no sandbox; keys are `platter_test_…`;
 * a reset refuses a live organization and, in a sandbox, replaces only its business data.
 */

let db: TestDatabase;
let live: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  live = await createOrganization(db, "Harbour Kitchen", "GBP");
});
afterAll(() => db?.dispose());

const run = <A, E>(program: Effect.Effect<A, E, Persistence>) => db.run(program);
const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const sandboxes = <A, E>(use: (store: Sandboxes["Service"]) => Effect.Effect<A, E>) => run(Sandboxes.use(use));

/** Rows of each table for organization `id`. */
const counts = async (id: number) =>
  (await rows<Record<string, number>>(
    `select ${["organizations", "api_keys", "clients", "recipes", "ingredients", "events", "dishes", "proposals", "invoices", "invoice_line_items",
      "idempotency_keys", "webhook_endpoints", "webhook_messages", "webhook_deliveries", "audit_log"]
      .map((table) => `(select count(*)::int from ${table} where ${table === "organizations" ? "id" : "organization_id"} = ?) as ${table}`).join(", ")}`,
    Array.from({ length: 15 }, () => id),
  ))[0]!;

describe("a sandbox", () => {
  it("is opened once, with the live organization's currency, a marked name and the demo data", async () => {
    const first = await sandboxes((s) => s.open(live.scope, seedDemo));
    const again = await sandboxes((s) => s.open(live.scope, seedDemo));
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    expect(await rows("select name, currency, sandbox_of from organizations where id = ?", [first.id]))
      .toEqual([{ name: "Harbour Kitchen (sandbox)", currency: "GBP", sandbox_of: String(live.id) }]);
    const seeded = await counts(first.id);
    expect(seeded).toMatchObject({ recipes: 26, clients: 12, webhook_messages: 0 });
    expect(seeded.invoices).toBeGreaterThan(0);
    expect(await counts(first.id)).toEqual(seeded);
    expect(await sandboxes((s) => s.standing(live.scope))).toEqual({ kind: "live", name: "Harbour Kitchen", sandbox: { id: first.id, name: "Harbour Kitchen (sandbox)" } });
  });

  it("opens at most one sandbox when two opens race", async () => {
    const other = await createOrganization(db, "Race Kitchen");
    const [x, y] = await Promise.all([sandboxes((s) => s.open(other.scope, seedDemo)), sandboxes((s) => s.open(other.scope, seedDemo))]);
    expect(x.id).toBe(y.id);
    expect([x.created, y.created].sort()).toEqual([false, true]);
    expect(await rows("select count(*)::int as n from organizations where sandbox_of = ?", [other.id])).toEqual([{ n: 1 }]);
    expect((await counts(x.id)).recipes).toBe(26);
  });

  it("has no sandbox of its own", async () => {
    const sandbox = await sandboxes((s) => s.linkedScope(live.scope));
    const before = await rows("select count(*)::int as n from organizations");
    await expect(sandboxes((s) => s.open(sandbox, seedDemo))).rejects.toMatchObject({ _tag: "InvalidTransition", message: expect.stringContaining("a sandbox has no sandbox") });
    expect(await rows("select count(*)::int as n from organizations")).toEqual(before);
  });

  it("steps between the two scopes both ways, back to live only for a session that came in by a switch link", async () => {
    const sandbox = await sandboxes((s) => s.linkedScope(live.scope));
    expect(sandbox.organizationId).not.toBe(live.id);
    expect(sandbox.currency).toBe("GBP");
    const switchLink = await db.run(DeveloperSessions.use((all) => all.createLink(sandbox, "switch")));
    expect((await sandboxes((s) => s.linkedScope(sandbox, switchLink.id))).organizationId).toBe(live.id);
    // Without a link, with an operator's link, or with the live organization's own switch link: refused.
    const operatorLink = await db.run(DeveloperSessions.use((all) => all.createLink(sandbox, "cli")));
    const liveLink = await db.run(DeveloperSessions.use((all) => all.createLink(live.scope, "switch")));
    for (const linkId of [undefined, operatorLink.id, liveLink.id]) {
      await expect(sandboxes((s) => s.linkedScope(sandbox, linkId))).rejects.toMatchObject({
        _tag: "InvalidTransition", message: expect.stringContaining("was not opened from the live organization"),
      });
    }
    expect(await sandboxes((s) => s.standing(sandbox))).toEqual({ kind: "sandbox", name: "Harbour Kitchen (sandbox)", live: { id: live.id, name: "Harbour Kitchen" } });
    const lonely = await createOrganization(db, "Lonely Kitchen");
    await expect(sandboxes((s) => s.linkedScope(lonely.scope))).rejects.toMatchObject({ _tag: "NotFound" });
  });

  it("gives its keys the platter_test_ prefix, created or rolled; the live organization's keep platter_", async () => {
    const sandbox = await sandboxes((s) => s.linkedScope(live.scope));
    const created = await run(ApiKeyRepository.use((keys) => keys.create(sandbox, "read_write", "Sandbox key")));
    expect(created.key).toMatch(/^platter_test_rw_[0-9a-f]{64}$/);
    const rolled = await run(ApiKeyRepository.use((keys) => keys.roll(sandbox, created.id, 0)));
    expect(rolled.key).toMatch(/^platter_test_rw_[0-9a-f]{64}$/);
    const shown = await run(ApiKeyRepository.use((keys) => keys.find(sandbox, created.id)));
    expect(shown.prefix).toBe(created.key.slice(0, 24));
    expect((await run(ApiKeyRepository.use((keys) => keys.create(live.scope, "read")))).key).toMatch(/^platter_ro_[0-9a-f]{64}$/);
    // The API authenticates a sandbox key as any other: its scope is the sandbox's.
    expect((await run(ApiKeyRepository.use((keys) => keys.authenticate(rolled.key)))).scope.organizationId).toBe(sandbox.organizationId);
  });
});

describe("resetting a sandbox's data", () => {
  it("refuses a live organization and changes nothing of it", async () => {
    const before = await counts(live.id);
    await expect(sandboxes((s) => s.reset(live.scope, seedDemo))).rejects.toMatchObject({
      _tag: "InvalidTransition", message: expect.stringContaining("not a sandbox"),
    });
    expect(await counts(live.id)).toEqual(before);
  });

  it("replaces only the sandbox's business data, keeping its keys, endpoints and delivery history", async () => {
    const sandbox = await sandboxes((s) => s.linkedScope(live.scope));
    await run(WebhookEndpointRepository.use((endpoints) => endpoints.add(sandbox, "https://sandbox.example/hook", [], generateSigningSecret())));
    await run(inOneTransaction(Effect.flatMap(createClient(sandbox, { name: "Extra" }), ({ id }) =>
      IdempotencyKeys.use((keys) => keys.remember(sandbox, { key: "k-1", fingerprint: "f" }, id)))));
    const liveBefore = await counts(live.id);
    const changed = await counts(sandbox.organizationId);
    expect(changed).toMatchObject({ clients: 13, idempotency_keys: 1, webhook_messages: 1, webhook_deliveries: 1, webhook_endpoints: 1 });
    const reset = await sandboxes((s) => s.reset(sandbox, seedDemo));
    expect(reset).toMatchObject({ recipes: 26, clients: 12 });
    expect(await counts(sandbox.organizationId)).toEqual({ ...changed, clients: 12, idempotency_keys: 0 });
    expect(await rows("select number from invoices where organization_id = ? order by number limit 1", [sandbox.organizationId])).toEqual([{ number: "INV-00001" }]);
    expect(await counts(live.id)).toEqual(liveBefore);
  });
});
