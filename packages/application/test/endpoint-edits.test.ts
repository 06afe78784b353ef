import { type EndpointEdit, operatorActor } from "@platter/domain";
import { createOrganization, createTestDatabase, type OrganizationFixture, raceThroughHeldInserts, type TestDatabase } from "@platter/testing";
import { Effect, Result } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpoints } from "../src/index.ts";

/**
 * Editing an endpoint (`WebhookEndpoints.edit`): URL (through the SSRF guard, one endpoint per URL),
 * event types, description and enabled state; the audit row records what changed, before and after;
 * a refused edit writes nothing, and an edit that changes nothing writes no audit row.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let other: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Editing");
  other = await createOrganization(db, "Other");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const SETTINGS = { allowPrivateNetworks: false, secretOverlapMs: 60_000, endpointsPerOrganization: 50 };
const operator = (fixture: OrganizationFixture) => operatorActor(fixture.scope, "root via the CLI");
const register = async (url: string, fixture = org) =>
  Result.getOrThrow(await db.run(Effect.result(WebhookEndpoints.register(operator(fixture), url, [], SETTINGS)))).id;
const edit = (id: number, change: EndpointEdit, fixture = org) =>
  db.run(Effect.result(WebhookEndpoints.edit(operator(fixture), id, change, SETTINGS)));
const endpointRow = async (id: number) =>
  (await rows<Record<string, unknown>>(
    "select url, origin, event_types, description, enabled, disabled_reason from webhook_endpoints where id = ?", [id]))[0];
const auditRows = (id: number) =>
  rows<{ action: string; operator: string; details: unknown }>(
    "select action, operator, details from audit_log where subject = ? order by id", [`webhook_endpoint ${id}`]);

describe("editing an endpoint", () => {
  it("changes its URL (and origin), types, description and enabled state, audited with what changed before and after", async () => {
    const id = await register("https://198.51.100.20/hooks");
    const edited = Result.getOrThrow(await edit(id, {
      url: "https://198.51.100.21:8443/new", eventTypes: ["invoice.paid"], description: "  Billing <sync> & more  ", enabled: false,
    }));
    expect(edited.after).toEqual({ url: "https://198.51.100.21:8443/new", event_types: ["invoice.paid"], description: "Billing <sync> & more", enabled: false });
    expect(await endpointRow(id)).toEqual({
      url: "https://198.51.100.21:8443/new", origin: "https://198.51.100.21:8443", event_types: ["invoice.paid"],
      description: "Billing <sync> & more", enabled: false, disabled_reason: "disabled by an operator",
    });
    expect((await auditRows(id)).slice(1)).toEqual([{
      action: "webhook_endpoint.updated",
      operator: "root via the CLI",
      details: {
        before: { url: "https://198.51.100.20/hooks", event_types: [], description: null, enabled: true },
        after: { url: "https://198.51.100.21:8443/new", event_types: ["invoice.paid"], description: "Billing <sync> & more", enabled: false },
      },
    }]);
  });

  it("records only the fields that changed, keeps those left out, and removes a description given empty", async () => {
    const id = await register("https://198.51.100.22/hooks");
    Result.getOrThrow(await edit(id, { description: "First" }));
    Result.getOrThrow(await edit(id, { description: "", url: "https://198.51.100.22/hooks" }));
    expect(await endpointRow(id)).toMatchObject({ url: "https://198.51.100.22/hooks", description: null, enabled: true, event_types: [] });
    expect((await auditRows(id)).slice(1).map((row) => row.details)).toEqual([
      { before: { description: null }, after: { description: "First" } },
      { before: { description: "First" }, after: { description: null } },
    ]);
  });

  it("writes no audit row for an edit that changes nothing", async () => {
    const id = await register("https://198.51.100.23/hooks");
    Result.getOrThrow(await edit(id, { url: "https://198.51.100.23/hooks", eventTypes: [], description: "", enabled: true }));
    expect((await auditRows(id)).map((row) => row.action)).toEqual(["webhook_endpoint.added"]);
  });

  it("stores a description through storableText: a NUL becomes U+FFFD", async () => {
    const id = await register("https://198.51.100.24/hooks");
    Result.getOrThrow(await edit(id, { description: "a\u0000b" }));
    expect((await endpointRow(id))?.["description"]).toBe("a\uFFFDb");
  });

  it("enables a disabled endpoint with a fresh start", async () => {
    const id = await register("https://198.51.100.25/hooks");
    Result.getOrThrow(await edit(id, { enabled: false }));
    Result.getOrThrow(await edit(id, { enabled: true }));
    expect(await endpointRow(id)).toMatchObject({ enabled: true, disabled_reason: null });
  });

  it.each<[string, (ids: { own: number; taken: number; foreign: number; listener: number }) => [number, EndpointEdit], string]>([
    ["a URL that is not one", ({ own }) => [own, { url: "ftp://198.51.100.30/x" }], "InvalidInput"],
    ["an empty URL", ({ own }) => [own, { url: "   " }], "InvalidInput"],
    ["a URL the SSRF guard refuses", ({ own }) => [own, { url: "http://127.0.0.1:8080/hook" }], "EndpointUrlRefused"],
    ["another endpoint's URL, written otherwise", ({ own }) => [own, { url: "HTTPS://198.51.100.31/Taken/" }], "EndpointUrlTaken"],
    ["a description longer than 500 characters", ({ own }) => [own, { description: "x".repeat(501) }], "InvalidInput"],
    ["a good change with a bad URL", ({ own }) => [own, { description: "fine", enabled: false, url: "http://10.0.0.1/x" }], "EndpointUrlRefused"],
    ["another organization's endpoint", ({ foreign }) => [foreign, { description: "mine now" }], "NotFound"],
    ["another organization's endpoint, with a URL", ({ foreign }) => [foreign, { url: "https://198.51.100.33/x" }], "NotFound"],
    ["a local listener's endpoint", ({ listener }) => [listener, { description: "mine" }], "InvalidTransition"],
  ])("refuses %s and writes nothing", async (_case, change, tag) => {
    const mine = await createOrganization(db, "Refused");
    const own = await register("https://198.51.100.30/own", mine);
    const taken = await register("https://198.51.100.31/taken", mine);
    const foreign = await register("https://198.51.100.32/foreign", other);
    const listener = await register("https://198.51.100.34/listener", mine);
    await rows("update webhook_endpoints set listener_key_id = ? where id = ?", [mine.writeKeyId, listener]);
    const [id, attempted] = change({ own, taken, foreign, listener });
    const snapshot = async () => ({
      endpoints: await rows("select * from webhook_endpoints order by id"), audit: await rows("select * from audit_log order by id"),
    });
    const before = await snapshot();
    const outcome = await edit(id, attempted, mine);
    expect(Result.isFailure(outcome)).toBe(true);
    expect((Result.merge(outcome) as { _tag: string })._tag).toBe(tag);
    expect(await snapshot()).toEqual(before);
    await rows("delete from webhook_endpoints where id = ?", [foreign]);
  });

  it("lets exactly one of many concurrent edits and a registration take one new URL (one endpoint per URL, under the organization's lock)", async () => {
    const racing = await createOrganization(db, "Racing edits");
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) ids.push(await register(`https://198.51.100.60/start-${i}`, racing));
    const target = "https://198.51.100.61/one";
    // Every update and insert waits until five transactions wait: without the organization's row
    // lock they would all have found the URL free by then.
    const outcomes = await raceThroughHeldInserts<Result.Result<unknown, unknown>>(db, "webhook_endpoints", [
      ...ids.map((id) => () => edit(id, { url: target }, racing)),
      () => db.run(Effect.result(WebhookEndpoints.register(operator(racing), target, [], SETTINGS))),
    ], { on: "insert or update" });
    expect(outcomes.filter(Result.isSuccess)).toHaveLength(1);
    expect(outcomes.filter(Result.isFailure).map((outcome) => (Result.merge(outcome) as { _tag: string })._tag)).toEqual(
      Array.from({ length: 6 }, () => "EndpointUrlTaken"),
    );
    expect(await rows("select count(*)::int as n from webhook_endpoints where url = ?", [target])).toEqual([{ n: 1 }]);
  });
});
