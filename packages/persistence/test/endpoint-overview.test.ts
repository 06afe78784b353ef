import { exampleMessage, generateSigningSecret, storedMessage } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, retryingDeliveryPolicy, type TestDatabase, testDeliveryPolicy } from "@platter/testing";

/**
 * The Developer area's view of endpoints: health over the last 24 hours (success rate, last
 * attempt) for every endpoint in one statement; the secret on demand; a test message delivered to one endpoint only; each scoped to its organization.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Healthy Caterers");
  b = await createOrganization(db, "Other Caterers");
});
afterAll(() => db?.dispose());

const execute = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const endpoints = WebhookEndpointRepository;

/** Claims every due delivery and records one attempt each, answered as `answer` says for its endpoint. */
const attemptAll = (answer: (endpointId: number) => number | undefined) =>
  db.run(Effect.gen(function* () {
    const queue = yield* DeliveryQueue;
    const { due } = yield* queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld);
    yield* queue.recordAttempts(due.map((delivery) => {
      const statusCode = answer(delivery.endpointId);
      const outcome = statusCode !== undefined && statusCode < 300 ? "succeeded" as const : "failed" as const;
      return {
        delivery, startedAt: new Date(), durationMs: 12, statusCode, error: statusCode === undefined ? "ECONNREFUSED: connection refused" : undefined,
        responseBody: "", outcome,
      };
    }), retryingDeliveryPolicy);
    return due.length;
  }));

describe("overview", () => {
  it("gives each endpoint its success rate and last attempt over the last 24 hours, and nothing of another organization", async () => {
    const [healthy, failing, quiet] = await db.run(Effect.all(
      ["https://203.0.113.1/ok", "https://203.0.113.2/down", "https://203.0.113.3/quiet"].map((url) => endpoints.use((all) => all.add(a.scope, url, ["event.created"], generateSigningSecret()))),
    ));
    const other = await db.run(endpoints.use((all) => all.add(b.scope, "https://203.0.113.4/b", [], generateSigningSecret())));
    for (const endpoint of [healthy!, failing!, other]) {
      const scope = endpoint === other ? b.scope : a.scope;
      for (let i = 0; i < 2; i++) await db.run(endpoints.use((all) => all.sendTestMessage(scope, endpoint.id, exampleMessage("event.created"))));
    }
    expect(await attemptAll((id) => (id === failing!.id ? 503 : 200))).toBe(6);
    // The failing endpoint's retries are due at once: a second round, with no answer at all.
    expect(await attemptAll((id) => (id === failing!.id ? undefined : 200))).toBe(2);
    // An attempt older than the window does not count.
    await execute("update webhook_attempts set started_at = now() - interval '25 hours' where id = (select min(id) from webhook_attempts)");

    const overview = await db.run(endpoints.use((all) => all.overview(a.scope)));
    expect(overview.map(({ id, health }) => ({ id, ...health, last_attempt_at: health.last_attempt_at === null ? null : "set" }))).toEqual([
      { id: healthy!.id, attempts: 1, succeeded: 1, last_attempt_at: "set", last_status_code: 200, last_error: null },
      { id: failing!.id, attempts: 4, succeeded: 0, last_attempt_at: "set", last_status_code: null, last_error: "ECONNREFUSED: connection refused" },
      { id: quiet!.id, attempts: 0, succeeded: 0, last_attempt_at: null, last_status_code: null, last_error: null },
    ]);
    expect(overview.map((endpoint) => endpoint.circuit_open_until)).toEqual([null, null, null]);
    expect(await db.run(endpoints.use((all) => all.overview(b.scope)))).toMatchObject([{ id: other.id, health: { attempts: 2, succeeded: 2 } }]);
    expect(await db.run(endpoints.use((all) => all.find(a.scope, failing!.id)))).toEqual(overview[1]);
    await expect(db.run(endpoints.use((all) => all.find(a.scope, other.id)))).rejects.toMatchObject({ _tag: "NotFound" });
  });
});

describe("secrets and test messages", () => {
  it("shows the secret only to its organization", async () => {
    const added = await db.run(endpoints.use((all) => all.add(a.scope, "https://203.0.113.5/secret", [], generateSigningSecret())));
    expect(await db.run(endpoints.use((all) => all.secret(a.scope, added.id)))).toEqual({ secret: added.secret, previous_secret_until: null });
    const rotated = await db.run(endpoints.use((all) => all.rotateSecret(a.scope, added.id, 3600_000, generateSigningSecret())));
    expect(await db.run(endpoints.use((all) => all.secret(a.scope, added.id)))).toEqual({
      secret: rotated.secret, previous_secret_until: rotated.previous_secret_until,
    });
    await expect(db.run(endpoints.use((all) => all.secret(b.scope, added.id)))).rejects.toMatchObject({ _tag: "NotFound" });
  });

  it("delivers a test message to its endpoint only, whatever it subscribes to; refuses a disabled or foreign endpoint and writes nothing", async () => {
    const target = await db.run(endpoints.use((all) => all.add(a.scope, "https://203.0.113.6/target", ["client.created"], generateSigningSecret())));
    await db.run(endpoints.use((all) => all.add(a.scope, "https://203.0.113.7/bystander", [], generateSigningSecret())));
    const { delivery_id } = await db.run(endpoints.use((all) => all.sendTestMessage(a.scope, target.id, exampleMessage("invoice.sent"))));
    const [row] = await execute<{ endpoint_id: string; type: string; payload: unknown; deliveries: number }>(
      `select d.endpoint_id, m.type, m.payload, (select count(*)::int from webhook_deliveries x where x.message_id = m.id) as deliveries
       from webhook_deliveries d join webhook_messages m on m.id = d.message_id where d.id = ?`,
      [delivery_id],
    );
    expect(row).toEqual({ endpoint_id: String(target.id), type: "invoice.sent", payload: storedMessage(exampleMessage("invoice.sent")).payload, deliveries: 1 });
    const delivery = await db.run(endpoints.use((all) => all.delivery(a.scope, target.id, delivery_id)));
    expect(delivery).toMatchObject({ id: delivery_id, event_type: "invoice.sent", status: "pending", attempts: [] });
    expect(JSON.parse(delivery.body!)).toMatchObject({ id: delivery.envelope_id, type: "invoice.sent", data: exampleMessage("invoice.sent").data });
    await expect(db.run(endpoints.use((all) => all.delivery(b.scope, target.id, delivery_id)))).rejects.toMatchObject({ _tag: "NotFound" });

    const [{ n: before }] = (await execute<{ n: number }>("select count(*)::int as n from webhook_messages")) as [{ n: number }];
    await db.run(endpoints.use((all) => all.setEnabled(a.scope, target.id, false, "disabled by hand")));
    await expect(db.run(endpoints.use((all) => all.sendTestMessage(a.scope, target.id, exampleMessage("event.created"))))).rejects.toMatchObject({
      _tag: "InvalidTransition",
    });
    await expect(db.run(endpoints.use((all) => all.sendTestMessage(b.scope, target.id, exampleMessage("event.created"))))).rejects.toMatchObject({
      _tag: "NotFound",
    });
    expect(await execute("select count(*)::int as n from webhook_messages")).toEqual([{ n: before }]);
    expect(await execute("select disabled_reason from webhook_endpoints where id = ?", [target.id])).toEqual([{ disabled_reason: "disabled by hand" }]);
  });
});
