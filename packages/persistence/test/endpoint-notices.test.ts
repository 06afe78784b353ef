import { type DeliveryPolicy, DISABLED_FAILING, generateSigningSecret } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, failDueDeliveries, nothingHeld, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * Operational notices on PostgreSQL: written by the statement that records the attempts causing
 * them, once per transition however many attempts fail, and sent on the operator channel (claimed
 * and settled like deliveries, to the operator's URL, with the operational envelope).
 */

let db: TestDatabase;
let org: OrganizationFixture;
let endpointId: number;
const HOUR = 3_600_000;
const policy: DeliveryPolicy = {
  circuitThreshold: 3, circuitCooldownMs: 0, retryScheduleMs: Array.from({ length: 100 }, () => 0), failureWindowMs: 48 * HOUR,
  disableNoticeMs: 24 * HOUR, notifyOperator: true,
};
const channel = { url: "http://127.0.0.1:9/operator", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const notices = () =>
  rows<{ kind: string; reason: string; operator_status: string }>(
    "select kind, reason, operator_status from endpoint_notices where endpoint_id = ? order by id", [endpointId],
  );

const failAll = () => failDueDeliveries(db, policy);

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
  endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.7/hook", [], generateSigningSecret())))).id;
  await db.run(createClient(org.scope, { name: "Ada" }));
  await db.run(createClient(org.scope, { name: "Grace" }));
});
afterAll(() => db?.dispose());

describe("endpoint notices", () => {
  it("writes one notice per transition: the circuit opening, the window's last day, the disabling; none per further failure", async () => {
    expect(await failAll()).toBe(2);
    expect(await notices()).toEqual([]);
    expect(await failAll()).toBe(2);
    expect(await notices()).toEqual([{ kind: "failing", reason: "4 failed attempts in a row, so its circuit is open", operator_status: "pending" }]);
    // Half-open now (a cooldown of 0): one probe per claim, each failing.
    for (let i = 0; i < 3; i++) expect(await failAll()).toBe(1);
    expect((await notices()).length).toBe(1);

    // 25 hours of failures left of 48: nothing yet; 23 left: about to be disabled.
    await rows("update webhook_endpoints set failing_since = now() - interval '23 hours' where id = ?", [endpointId]);
    await failAll();
    expect((await notices()).length).toBe(1);
    await rows("update webhook_endpoints set failing_since = now() - interval '25 hours' where id = ?", [endpointId]);
    await failAll();
    await failAll();
    expect((await notices()).map((n) => n.kind)).toEqual(["failing", "disabling_soon"]);
    const [soon] = await db.run(WebhookEndpointRepository.use((r) => r.activeNotices(org.scope)));
    expect(soon).toMatchObject({ endpoint_id: endpointId, kind: "disabling_soon", endpoint_url: "https://198.51.100.7/hook" });
    expect(Date.parse(soon!.disables_at!) - Date.parse(soon!.at)).toBeGreaterThan(22 * HOUR);

    await rows("update webhook_endpoints set failing_since = now() - interval '49 hours' where id = ?", [endpointId]);
    await failAll();
    expect((await notices()).map((n) => [n.kind, n.reason])).toEqual([
      ["failing", "4 failed attempts in a row, so its circuit is open"],
      ["disabling_soon", expect.stringMatching(/^every delivery has failed since \d{4}-.*Z, and the failure window disables it unless one succeeds$/)],
      ["disabled", DISABLED_FAILING],
    ]);
    expect(await db.run(WebhookEndpointRepository.use((r) => r.activeNotices(org.scope)))).toEqual([
      expect.objectContaining({ endpoint_id: endpointId, kind: "disabled", reason: DISABLED_FAILING, disables_at: null }),
    ]);
  });

  it("clears the active notice when the endpoint is enabled again", async () => {
    await db.run(WebhookEndpointRepository.use((r) => r.setEnabled(org.scope, endpointId, true)));
    expect(await db.run(WebhookEndpointRepository.use((r) => r.activeNotices(org.scope)))).toEqual([]);
    expect((await notices()).length).toBe(3);
  });

  it("sends each notice on the operator channel: to the operator's URL, as the operational envelope, settled like a delivery", async () => {
    const claimed = await db.run(DeliveryQueue.use((q) => q.operatorNotices(channel).claimDue(10, 60_000, policy, nothingHeld)));
    expect(claimed.due.map((d) => [d.url, d.secret, d.organizationId, d.endpointId])).toEqual(
      [1, 2, 3].map(() => [channel.url, channel.secret, org.id, endpointId]),
    );
    const bodies = claimed.due.map((d) => JSON.parse(d.body));
    expect(bodies.map((b) => b.type)).toEqual(["endpoint.failing", "endpoint.disabling_soon", "endpoint.disabled"]);
    expect(bodies[0]).toEqual({
      id: claimed.due[0]!.envelopeId, type: "endpoint.failing", created_at: bodies[0].data.at,
      data: {
        organization_id: org.id, endpoint_id: endpointId, endpoint_url: "https://198.51.100.7/hook",
        reason: "4 failed attempts in a row, so its circuit is open", at: bodies[0].data.at,
      },
    });
    expect(claimed.due[0]!.envelopeId).toMatch(/^ntc_[0-9a-f]{32}$/);
    expect(bodies[1].data.disables_at).toMatch(/Z$/);
    // Leased: a second claim finds nothing.
    expect((await db.run(DeliveryQueue.use((q) => q.operatorNotices(channel).claimDue(10, 60_000, policy, nothingHeld)))).due).toEqual([]);
    const [first, ...rest] = claimed.due;
    await db.run(DeliveryQueue.use((q) => q.operatorNotices(channel).recordAttempts([
      { delivery: first!, startedAt: new Date(), durationMs: 2, statusCode: 204, error: undefined, responseBody: undefined, outcome: "succeeded" },
      ...rest.map((delivery) => ({
        delivery, startedAt: new Date(), durationMs: 2, statusCode: 503, error: undefined, responseBody: undefined, outcome: "failed" as const,
      })),
    ], policy)));
    expect((await notices()).map((n) => n.operator_status)).toEqual(["succeeded", "pending", "pending"]);
    const again = await db.run(DeliveryQueue.use((q) => q.operatorNotices(channel).claimDue(10, 60_000, policy, nothingHeld)));
    expect(again.due.map((d) => [d.envelopeId, d.attempt])).toEqual(rest.map((d) => [d.envelopeId, 2]));
  });

  it("writes notices as unsent when no operator channel is configured", async () => {
    await rows("update webhook_endpoints set consecutive_failures = 0, failing_since = null, circuit_open_until = null where id = ?", [endpointId]);
    await rows("update webhook_deliveries set status = 'pending', next_attempt_at = now() - interval '1 second' where endpoint_id = ?", [endpointId]);
    const quiet = { ...policy, notifyOperator: false };
    for (let i = 0; i < 2; i++) {
      await db.run(Effect.gen(function* () {
        const queue = yield* DeliveryQueue;
        const { due } = yield* queue.claimDue(100, 60_000, quiet, nothingHeld);
        yield* queue.recordAttempts(due.map((delivery) => ({
          delivery, startedAt: new Date(), durationMs: 3, statusCode: 500, error: undefined, responseBody: undefined, outcome: "failed" as const,
        })), quiet);
      }));
    }
    expect((await notices()).slice(3)).toEqual([{ kind: "failing", reason: "4 failed attempts in a row, so its circuit is open", operator_status: "unsent" }]);
  });
});
