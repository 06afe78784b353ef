import { type Actor, apiKeyActor, operatorActor, SETTLED_ENDPOINT_DELETED } from "@platter/domain";
import { HistoryPartitions, Housekeeping, LocalListeners, type Persistence, WEBHOOK_HISTORY } from "@platter/persistence";
import {
  backdateHistory, createOrganization, createTestDatabase, failDueDeliveries, type OrganizationFixture, retryingDeliveryPolicy, sealSecretsWrittenInClear, type TestDatabase, testDeliveryPolicy,
} from "@platter/testing";
import { Effect, Result } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Clients, Deliveries, WebhookEndpoints } from "../src/index.ts";

/**
 * Deleting a webhook endpoint (`WebhookEndpoints.delete`): its pending deliveries end ("endpoint
 * deleted") and its history stays readable, marked as a deleted endpoint's; both sealed secrets are
 * destroyed; the deletion is audited; its slot under the limit and its URL are free again; it gets
 * nothing new and every change to it is `NotFound`; the retention sweep removes its row once no
 * delivery or notice refers to it.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const settings = (limit: number) => ({ allowPrivateNetworks: false, secretOverlapMs: 3_600_000, endpointsPerOrganization: limit });
const actorOf = (org: OrganizationFixture): Actor => operatorActor(org.scope, "root via the CLI");
const register = (org: OrganizationFixture, url: string, limit = 10) =>
  db.run(Effect.result(WebhookEndpoints.register(actorOf(org), url, [], settings(limit))));
const deleteEndpoint = (org: OrganizationFixture, id: number) => db.run(Effect.result(WebhookEndpoints.delete(actorOf(org), id)));
const newClient = (org: OrganizationFixture, name: string) => db.run(Clients.create(apiKeyActor(org.scope), { name }));
const deliveriesOf = (endpointId: number) =>
  rows<{ status: string; settled_reason: string | null; lease_token: string | null; completed_at: string | null }>(
    "select status, settled_reason, lease_token, completed_at from webhook_deliveries where endpoint_id = ? order by id", [endpointId],
  );
const endpointRow = async (id: number) =>
  (await rows<{ secret: string | null; previous_secret: string | null; previous_secret_until: string | null; deleted_at: string | null; enabled: boolean }>(
    "select secret, previous_secret, previous_secret_until, deleted_at, enabled from webhook_endpoints where id = ?", [id],
  ))[0];

describe("deleting an endpoint", () => {
  it("ends its pending deliveries as 'endpoint deleted', keeps its history readable as a deleted endpoint's, destroys both secrets, audits it", async () => {
    const org = await createOrganization(db, "Deleting");
    const endpoint = Result.getOrThrow(await register(org, "https://198.51.100.40/deleted"));
    const kept = Result.getOrThrow(await register(org, "https://198.51.100.40/kept"));
    // A rotation leaves a previous secret signing beside the new one: both go.
    await db.run(WebhookEndpoints.rotateSecret(actorOf(org), endpoint.id, { secretOverlapMs: 3_600_000 }));
    await newClient(org, "Tried once");
    expect(await failDueDeliveries(db, retryingDeliveryPolicy)).toBe(2);
    await newClient(org, "Never tried");
    expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).toEqual(["pending", "pending"]);

    expect(Result.getOrThrow(await deleteEndpoint(org, endpoint.id))).toEqual({ id: endpoint.id, url: "https://198.51.100.40/deleted", ended: 2 });

    for (const delivery of await deliveriesOf(endpoint.id)) {
      expect(delivery).toMatchObject({ status: "failed", settled_reason: SETTLED_ENDPOINT_DELETED, lease_token: null });
      expect(delivery.completed_at).not.toBeNull();
    }
    // The other endpoint's deliveries are untouched.
    expect((await deliveriesOf(kept.id)).map((d) => [d.status, d.settled_reason])).toEqual([["pending", null], ["pending", null]]);
    const row = await endpointRow(endpoint.id);
    expect(row).toMatchObject({ secret: null, previous_secret: null, previous_secret_until: null, enabled: false });
    expect(row!.deleted_at).not.toBeNull();
    // A sealing pass (every start runs one) finds nothing in clear to seal: the secrets stay gone.
    await sealSecretsWrittenInClear(db);
    expect(await endpointRow(endpoint.id)).toMatchObject({ secret: null, previous_secret: null });

    const log = await db.run(Deliveries.log(actorOf(org), { endpointId: endpoint.id }, { limit: 10, after: undefined }));
    expect(log.data.map((entry) => [entry.endpoint_url, entry.endpoint_deleted, entry.status, entry.settled_reason])).toEqual([
      ["https://198.51.100.40/deleted", true, "failed", SETTLED_ENDPOINT_DELETED],
      ["https://198.51.100.40/deleted", true, "failed", SETTLED_ENDPOINT_DELETED],
    ]);
    const message = await db.run(Deliveries.message(actorOf(org), log.data[1]!.envelope_id));
    expect(message.deliveries.find((d) => d.endpoint_id === endpoint.id)!.attempts).toHaveLength(1);

    expect((await db.run(WebhookEndpoints.list(actorOf(org)))).map((e) => e.id)).toEqual([kept.id]);
    expect((await db.run(WebhookEndpoints.overview(actorOf(org)))).map((e) => e.id)).toEqual([kept.id]);
    expect(await rows("select action, subject, operator from audit_log where organization_id = ? and action = 'webhook_endpoint.deleted'", [org.id]))
      .toEqual([{ action: "webhook_endpoint.deleted", subject: `webhook_endpoint ${endpoint.id}`, operator: "root via the CLI" }]);
  });

  it("frees its slot under the limit and its URL", async () => {
    const org = await createOrganization(db, "Full");
    const only = Result.getOrThrow(await register(org, "https://198.51.100.41/only", 1));
    expect(Result.merge(await register(org, "https://198.51.100.41/second", 1))).toMatchObject({ _tag: "EndpointLimitReached" });
    Result.getOrThrow(await deleteEndpoint(org, only.id));
    // The same URL again (however written), in the slot the deleted one had.
    const again = Result.getOrThrow(await register(org, "HTTPS://198.51.100.41/only", 1));
    expect(again.id).not.toBe(only.id);
    expect(Result.merge(await register(org, "https://198.51.100.41/third", 1))).toMatchObject({ _tag: "EndpointLimitReached" });
  });

  it("refuses a local listener of platter listen (it goes with its key), and writes nothing", async () => {
    const org = await createOrganization(db, "Listening");
    const listener = await db.run(LocalListeners.use((l) =>
      l.open({ ...org.scope, apiKeyId: org.writeKeyId }, { forwardTo: "http://localhost:4000/hook", eventTypes: [] }, 60_000, 5)));
    const refused = Result.merge(await deleteEndpoint(org, listener.id));
    expect(refused).toMatchObject({ _tag: "InvalidTransition", message: "This is a local listener of `platter listen`: it goes with its API key." });
    expect((await endpointRow(listener.id))!.deleted_at).toBeNull();
    expect(await rows("select id from audit_log where organization_id = ?", [org.id])).toEqual([]);
  });
});

describe("a deleted endpoint", () => {
  let org: OrganizationFixture;
  let deletedId: number;
  let deliveryId: number;
  beforeAll(async () => {
    org = await createOrganization(db, "Deleted");
    deletedId = Result.getOrThrow(await register(org, "https://198.51.100.42/gone")).id;
    await newClient(org, "Before");
    deliveryId = Number((await rows<{ id: string }>("select id from webhook_deliveries where endpoint_id = ?", [deletedId]))[0]!.id);
    Result.getOrThrow(await deleteEndpoint(org, deletedId));
  });

  it("gets no new deliveries", async () => {
    await newClient(org, "After");
    expect(await deliveriesOf(deletedId)).toHaveLength(1);
  });

  it.each<[string, (actor: Actor, id: number) => Effect.Effect<unknown, unknown, Persistence>]>([
    ["found", (actor, id) => WebhookEndpoints.find(actor, id)],
    ["deleted again", (actor, id) => WebhookEndpoints.delete(actor, id)],
    ["enabled", (actor, id) => WebhookEndpoints.setEnabled(actor, id, true)],
    ["disabled", (actor, id) => WebhookEndpoints.setEnabled(actor, id, false)],
    ["sent a test event", (actor, id) => WebhookEndpoints.sendTestMessage(actor, id, "event.created")],
    ["asked for its secret", (actor, id) => WebhookEndpoints.revealSecret(actor, id)],
    ["given a new secret", (actor, id) => WebhookEndpoints.rotateSecret(actor, id, { secretOverlapMs: 0 })],
    ["replayed to (its failed deliveries)", (actor, id) => Deliveries.replayFailed(actor, id)],
    ["edited", (actor, id) => WebhookEndpoints.edit(actor, id, { description: "still here?" }, { allowPrivateNetworks: false })],
    ["edited to a new URL", (actor, id) => WebhookEndpoints.edit(actor, id, { url: "https://198.51.100.42/back" }, { allowPrivateNetworks: false })],
    ["throttled", (actor, id) => WebhookEndpoints.setThrottle(actor, id, 5)],
  ])("cannot be %s: NotFound, and nothing is written", async (_what, action) => {
    const before = await rows("select to_jsonb(w) as row from webhook_endpoints w where id = ?", [deletedId]);
    const audited = await rows("select id from audit_log where organization_id = ?", [org.id]);
    expect(Result.merge(await db.run(Effect.result(action(actorOf(org), deletedId))))).toMatchObject({ _tag: "NotFound" });
    expect(await rows("select to_jsonb(w) as row from webhook_endpoints w where id = ?", [deletedId])).toEqual(before);
    expect(await rows("select id from audit_log where organization_id = ?", [org.id])).toEqual(audited);
  });

  it("has deliveries a replay refuses (InvalidTransition, a 409) and leaves as they are", async () => {
    const refused = Result.merge(await db.run(Effect.result(Deliveries.replay(actorOf(org), deliveryId))));
    expect(refused).toMatchObject({ _tag: "InvalidTransition", message: "Its endpoint was deleted: nothing is sent to it again. Its history stays readable until retention." });
    expect((await deliveriesOf(deletedId)).map((d) => [d.status, d.settled_reason])).toEqual([["failed", SETTLED_ENDPOINT_DELETED]]);
  });
});

describe("the retention sweep", () => {
  it("removes a deleted endpoint's row once no delivery or notice refers to it, and never a live endpoint's", async () => {
    const org = await createOrganization(db, "Swept");
    const deleted = Result.getOrThrow(await register(org, "https://198.51.100.43/deleted")).id;
    const live = Result.getOrThrow(await register(org, "https://198.51.100.43/live")).id;
    await newClient(org, "History");
    // One failure, not retried, opens the circuit: each endpoint gets a "failing" notice (the operator's copy unsent).
    // (Every due delivery of the database is claimed: earlier tests' pending ones too.)
    expect(await failDueDeliveries(db, { ...testDeliveryPolicy, circuitThreshold: 1 })).toBeGreaterThanOrEqual(2);
    for (const id of [deleted, live]) expect(await rows("select kind from endpoint_notices where endpoint_id = ?", [id])).toEqual([{ kind: "failing" }]);
    Result.getOrThrow(await deleteEndpoint(org, deleted));
    const sweep = () => db.run(Housekeeping.use((h) => h.pruneDeletedEndpoints(100)));

    // (The sweep is across organizations: earlier tests' deleted endpoints with no history go now.)
    await sweep();
    expect(await endpointRow(deleted)).toBeDefined();
    // Retention takes the history (two days old, a window of one: its partitions dropped) and the notices.
    await backdateHistory(db.url, "m.organization_id = $1", [org.id], "now() - interval '2 days'");
    await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 24 * 3600_000)));
    expect(await deliveriesOf(deleted)).toEqual([]);
    await sweep();
    expect(await endpointRow(deleted)).toBeDefined();
    await db.run(Housekeeping.use((h) => h.pruneNotices(0, 100)));
    expect(await sweep()).toBeGreaterThanOrEqual(1);
    expect(await endpointRow(deleted)).toBeUndefined();
    // The live endpoint, its history gone too, stays.
    expect(await endpointRow(live)).toBeDefined();
    // The audit log still says what happened to it.
    expect(await rows("select subject from audit_log where organization_id = ? and action = 'webhook_endpoint.deleted'", [org.id]))
      .toEqual([{ subject: `webhook_endpoint ${deleted}` }]);
  });

  it("ends a delivery written to a deleted endpoint by a racing create as 'endpoint deleted'", async () => {
    const org = await createOrganization(db, "Raced");
    const id = Result.getOrThrow(await register(org, "https://198.51.100.44/raced")).id;
    Result.getOrThrow(await deleteEndpoint(org, id));
    // As if a create's transaction had read the endpoint before the delete committed.
    await rows(`insert into webhook_messages (organization_id, type, payload) values (?, 'client.created', '{}'::jsonb)`, [org.id]);
    await rows(`insert into webhook_deliveries (organization_id, endpoint_id, message_id)
      select ?, ?, max(id) from webhook_messages where organization_id = ?`, [org.id, id, org.id]);
    expect(await db.run(Housekeeping.use((h) => h.endDeliveriesOfDisabledEndpoints(100)))).toBe(1);
    expect((await deliveriesOf(id)).map((d) => [d.status, d.settled_reason])).toEqual([["failed", SETTLED_ENDPOINT_DELETED]]);
  });
});
