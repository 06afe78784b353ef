import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DispatcherProcess, endpointsOf, killLeftoverDispatchers, metricValue, pythonHmacHex, type Receiver, type ReceivedRequest, sql, startDispatcherProcess,
  startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * Operational webhooks end to end: an organization's endpoint that answers 500 starts failing, is
 * about to be disabled and is disabled by the failure window (shortened to 1.5 s, the notice to
 * 1 s before it); the dispatcher process sends each notice to the operator's receiver on 127.0.0.1,
 * signed with the operator's secret (verified by the npm `standardwebhooks` and `svix` libraries),
 * retried with the same id after a 503, and never to the organization's endpoint.
 */

const OPERATOR_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
let db: TestDatabase;
let dispatcher: DispatcherProcess;
let operator: Receiver;
let endpointReceiver: Receiver;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  // The operator's receiver fails each notice's first try: it is retried like a delivery, with the same id and bytes.
  operator = await startReceiver((_, previous) => ({ status: previous === 0 ? 503 : 204 }));
  endpointReceiver = await startReceiver(() => ({ status: 500 }));
  dispatcher = await startDispatcherProcess(db.url, {
    WEBHOOK_RETRY_SCHEDULE: "0s,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms",
    WEBHOOK_CIRCUIT_THRESHOLD: "2",
    WEBHOOK_CIRCUIT_COOLDOWN: "100ms",
    WEBHOOK_FAILURE_WINDOW: "1500ms",
    WEBHOOK_DISABLE_NOTICE: "1s",
    OPERATOR_WEBHOOK_URL: `${operator.url}/platter-operations`,
    OPERATOR_WEBHOOK_SECRET: OPERATOR_SECRET,
  });
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await operator?.close();
  await endpointReceiver?.close();
  await db?.dispose();
});

/** The request verifies with the operator's secret (hex header, and Standard Webhooks by two libraries); returns its envelope. */
const verified = async (request: ReceivedRequest) => {
  const raw = request.rawBody.toString("utf8");
  const headers = {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
  expect(request.headers["x-platter-signature"]).toBe(await pythonHmacHex(OPERATOR_SECRET, request.rawBody));
  expect(() => new SvixWebhook(OPERATOR_SECRET).verify(raw, headers)).not.toThrow();
  // Another secret (an organization's) does not verify it.
  expect(() => new StandardWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").verify(raw, headers)).toThrow();
  return new StandardWebhook(OPERATOR_SECRET).verify(raw, headers) as { id: string; type: string; created_at: string; data: Record<string, unknown> };
};

describe("operational webhooks", () => {
  it("tells the operator's URL, signed, when an endpoint starts failing, is about to be disabled and is disabled", async () => {
    const org = await createOrganization(db, "Failing Caterers");
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, endpointReceiver.url, [], generateSigningSecret())));
    for (const name of ["Ada", "Grace", "Edsger"]) await db.run(Clients.create(apiKeyActor(org.scope), { name }));

    await waitFor("the endpoint to be disabled", async () => (await endpointsOf(db, org.id)).find((e) => !e.enabled), 15_000);
    const delivered = await waitFor("three notices delivered to the operator", async () => {
      const rows = await sql<{ n: number }>(db, "select count(*)::int as n from endpoint_notices where operator_status = 'succeeded'");
      return rows[0]!.n === 3 ? true : undefined;
    }, 15_000);
    expect(delivered).toBe(true);

    // Each notice tried twice (503, then 204) with the same id and bytes; nothing else arrived.
    const envelopes = await Promise.all(operator.received.map(verified));
    const ids = [...new Set(envelopes.map((e) => e.id))];
    expect(ids.map((id) => envelopes.filter((e) => e.id === id).length)).toEqual([2, 2, 2]);
    // The operator channel's own counter: three answered 503 first, then 2xx.
    const operatorAttempts = async (outcome: string) =>
      metricValue(await (await fetch(`${dispatcher.opsUrl}/metrics`)).text(), `platter_operator_webhook_attempts_total{outcome="${outcome}"}`);
    await expect.poll(() => operatorAttempts("succeeded")).toBe(3);
    expect(await operatorAttempts("failed")).toBe(3);
    for (const id of ids) {
      const tries = operator.received.filter((r) => r.headers["webhook-id"] === id);
      expect(tries[0]!.rawBody.equals(tries[1]!.rawBody)).toBe(true);
    }
    const firstOfEach = ids.map((id) => envelopes.find((e) => e.id === id)!);
    expect(firstOfEach.map((e) => e.type)).toEqual(["endpoint.failing", "endpoint.disabling_soon", "endpoint.disabled"]);
    for (const envelope of firstOfEach) {
      expect(envelope.id).toMatch(/^ntc_[0-9a-f]{32}$/);
      expect(envelope.data).toMatchObject({ organization_id: org.id, endpoint_id: endpoint.id, endpoint_url: endpointReceiver.url, at: envelope.created_at });
    }
    expect(firstOfEach[0]!.data["reason"]).toMatch(/^\d+ failed attempts in a row, so its circuit is open$/);
    expect(firstOfEach[1]!.data["disables_at"]).toMatch(/Z$/);
    expect(firstOfEach[2]!.data["reason"]).toBe("every delivery failed for the whole failure window");
    expect(operator.received.every((r) => r.headers["user-agent"] === "Platter-Webhooks/1.0")).toBe(true);

    // The organization's endpoint only ever got its business messages.
    expect([...new Set(endpointReceiver.received.map((r) => r.envelope.type))]).toEqual(["client.created"]);
  });
});
