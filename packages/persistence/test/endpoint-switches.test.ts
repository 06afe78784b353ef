import { type DeliveryPolicy, DISABLED_FAILING, generateSigningSecret, SETTLED_ENDPOINT_DISABLED } from "@platter/domain";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { HistoryPartitions, Housekeeping, WEBHOOK_HISTORY, WebhookEndpointRepository } from "../src/index.ts";
import { backdateHistory, createOrganization, createTestDatabase, failDueDeliveries, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * Enabling or disabling an endpoint by hand starts its run of failures over, so toggling a failing
 * endpoint cannot make the operator's channel notice it again and again; and a disabled endpoint's
 * pending deliveries end (failed, "endpoint disabled"), whether it was disabled by hand or by its
 * failure window, so retention reaches their messages.
 */

let db: TestDatabase;
let org: OrganizationFixture;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const policy: DeliveryPolicy = {
  circuitThreshold: 3, circuitCooldownMs: 0, retryScheduleMs: Array.from({ length: 100 }, () => 0), failureWindowMs: 48 * HOUR,
  disableNoticeMs: 24 * HOUR, notifyOperator: true,
};

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const noticesOf = async (endpointId: number) =>
  (await rows<{ kind: string }>("select kind from endpoint_notices where endpoint_id = ? order by id", [endpointId])).map((n) => n.kind);
const deliveriesOf = (endpointId: number) =>
  rows<{ id: string; status: string; settled_reason: string | null; message_id: string }>(
    "select id, status, settled_reason, message_id from webhook_deliveries where endpoint_id = ? order by id", [endpointId],
  );
const newClient = (name: string) => db.run(createClient(org.scope, { name }));
const setEnabled = (endpointId: number, enabled: boolean) =>
  db.run(WebhookEndpointRepository.use((r) => r.setEnabled(org.scope, endpointId, enabled)));

const failAll = () => failDueDeliveries(db, policy);

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
// Each test its own organization (a client's message goes to every endpoint of its organization);
// each ends with its endpoint disabled, so the next test's claims find only its own deliveries.
beforeEach(async ({ task }) => {
  org = await createOrganization(db, task.name.slice(0, 60));
});
afterAll(() => db?.dispose());

describe("enabling and disabling a failing endpoint", () => {
  it("sends the operator one endpoint.failing notice, however often it is disabled and enabled with a failure between", async () => {
    const endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.71/toggled", [], generateSigningSecret())))).id;
    for (const name of ["One", "Two", "Three"]) await newClient(name);
    expect(await failAll()).toBe(3);
    expect(await noticesOf(endpointId)).toEqual(["failing"]);

    for (let cycle = 0; cycle < 10; cycle++) {
      await setEnabled(endpointId, false);
      await setEnabled(endpointId, true);
      await newClient(`Cycle ${cycle}`);
      expect(await failAll()).toBe(1);
    }
    expect(await noticesOf(endpointId)).toEqual(["failing"]);
    const [endpoint] = await rows<{ consecutive_failures: number; circuit_open_until: string | null; notice_stage: string | null }>(
      "select consecutive_failures, circuit_open_until, notice_stage from webhook_endpoints where id = ?", [endpointId],
    );
    expect(endpoint).toEqual({ consecutive_failures: 1, circuit_open_until: null, notice_stage: null });
    await setEnabled(endpointId, false);
  });
});

describe("enabling an endpoint that is already enabled", () => {
  it("changes nothing: its failures, circuit and notice stage stay, so it still climbs to disabled", async () => {
    const endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.73/kept", [], generateSigningSecret())))).id;
    for (const name of ["One", "Two", "Three"]) await newClient(name);
    expect(await failAll()).toBe(3);
    const health = () => rows<{ consecutive_failures: number; failing: boolean; notice_stage: string | null }>(
      "select consecutive_failures, failing_since is not null as failing, notice_stage from webhook_endpoints where id = ?", [endpointId],
    );
    const before = await health();
    expect(before).toEqual([{ consecutive_failures: 3, failing: true, notice_stage: "failing" }]);
    for (let click = 0; click < 5; click++) expect(await setEnabled(endpointId, true)).toMatchObject({ changed: false });
    expect(await health()).toEqual(before);
    await newClient("Four");
    expect(await failAll()).toBe(1);
    expect(await noticesOf(endpointId)).toEqual(["failing"]);
    await setEnabled(endpointId, false);
  });
});

describe("a disabled endpoint's pending deliveries", () => {
  it("end when it is disabled by hand (failed, 'endpoint disabled'), so retention removes their messages", async () => {
    const endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.72/disabled", [], generateSigningSecret())))).id;
    for (const name of ["Ada", "Grace"]) await newClient(name);
    expect(await failAll()).toBe(2);
    expect((await deliveriesOf(endpointId)).map((d) => d.status)).toEqual(["pending", "pending"]);

    expect(await setEnabled(endpointId, false)).toEqual({ id: endpointId, enabled: false, changed: true, ended: 2 });
    const ended = await deliveriesOf(endpointId);
    expect(ended.map((d) => [d.status, d.settled_reason])).toEqual([["failed", SETTLED_ENDPOINT_DISABLED], ["failed", SETTLED_ENDPOINT_DISABLED]]);

    // Each message is a week old, and the retention window a day: both go, deliveries and attempts with them.
    await backdateHistory(db.url, "m.id = any($1::bigint[])", [[ended[0]!.message_id, ended[1]!.message_id]], "now() - interval '7 days'");
    expect(await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, DAY)))).toBeGreaterThanOrEqual(1);
    expect(await deliveriesOf(endpointId)).toEqual([]);
    expect(await rows("select 1 from webhook_messages where id in (?, ?)", [ended[0]!.message_id, ended[1]!.message_id])).toEqual([]);
  });

  it("end in the history sweep when one is left pending after the disable (a create or replay that raced it)", async () => {
    const endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.74/raced", [], generateSigningSecret())))).id;
    await newClient("Raced");
    expect(await setEnabled(endpointId, false)).toMatchObject({ changed: true, ended: 1 });
    // What a create that read the endpoint as enabled before the disable committed leaves behind.
    await rows("update webhook_deliveries set status = 'pending', completed_at = null, settled_reason = null, next_attempt_at = now() where endpoint_id = ?", [endpointId]);
    expect((await deliveriesOf(endpointId)).map((d) => d.status)).toEqual(["pending"]);
    expect(await db.run(Housekeeping.use((h) => h.endDeliveriesOfDisabledEndpoints(100)))).toBe(1);
    expect((await deliveriesOf(endpointId)).map((d) => [d.status, d.settled_reason])).toEqual([["failed", SETTLED_ENDPOINT_DISABLED]]);
    expect(await db.run(Housekeeping.use((h) => h.endDeliveriesOfDisabledEndpoints(100)))).toBe(0);
  });

  it("end when its failure window disables it, those of the batch and every other pending one", async () => {
    const endpointId = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.73/window", [], generateSigningSecret())))).id;
    await newClient("Window one");
    expect(await failAll()).toBe(1);
    await newClient("Window two");
    await newClient("Window three");
    // One of three is in flight when the window runs out; the other two wait for their first try.
    await rows("update webhook_endpoints set failing_since = now() - interval '49 hours' where id = ?", [endpointId]);
    await rows(
      "update webhook_deliveries set next_attempt_at = now() + interval '1 hour' where endpoint_id = ? and attempts = 0", [endpointId],
    );
    expect(await failAll()).toBe(1);
    const [endpoint] = await rows<{ enabled: boolean; disabled_reason: string }>(
      "select enabled, disabled_reason from webhook_endpoints where id = ?", [endpointId],
    );
    expect(endpoint).toEqual({ enabled: false, disabled_reason: DISABLED_FAILING });
    expect((await deliveriesOf(endpointId)).map((d) => [d.status, d.settled_reason])).toEqual(
      [1, 2, 3].map(() => ["failed", SETTLED_ENDPOINT_DISABLED]),
    );
    // One failure before (under the circuit's threshold), then the window: the one notice is the disabling.
    expect(await noticesOf(endpointId)).toEqual(["disabled"]);
  });
});
