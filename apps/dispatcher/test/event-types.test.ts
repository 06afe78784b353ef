import type { WebhookEventType } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DispatcherProcess, insertDraftInvoice, insertDraftProposal, killLeftoverDispatchers, metricValue,
  type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { expectSignedEnvelope } from "./envelope-checks.ts";
import { BusinessActions, Clients, Events } from "@platter/application";
import { apiKeyActor, generateSigningSecret, operatorActor } from "@platter/domain";

/** One dispatcher process for the file; every test has its own organization, endpoints and receivers. */

let db: TestDatabase;
let dispatcher: DispatcherProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  dispatcher = await startDispatcherProcess(db.url);
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dispose();
});

const receiver = async () => {
  const started = await startReceiver();
  receivers.push(started);
  return started;
};

/** An organization with one endpoint (subscribed to `types`, every type when empty) on its own receiver. */
const organizationWithEndpoint = async (types: WebhookEventType[] = []) => {
  const org = await createOrganization(db, "Webhook Caterers");
  const target = await receiver();
  const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, types, generateSigningSecret())));
  return { org, target, endpoint };
};

/** Waits for the single delivery of `org`, then checks it and the one request the receiver got. */
const expectDeliveredOnce = async (
  org: OrganizationFixture,
  target: Receiver,
  secret: string,
  expected: { type: WebhookEventType; dataId: number; dataName: string },
) => {
  const [delivery] = await settledDeliveries(db, org.id, 1);
  expect(delivery).toMatchObject({ status: "succeeded", event_type: expected.type });
  expect(delivery!.attempts).toHaveLength(1);
  expect(delivery!.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null, next_attempt_at: null });
  expect(target.received).toHaveLength(1);
  const envelope = await expectSignedEnvelope(target.received[0]!, { ...expected, secret });
  expect(envelope.id).toBe(delivery!.envelope_id);
  const [outbox] = await sql<{ envelope_id: string; created_at: string }>(
    db,
    `select envelope_id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
     from webhook_messages where organization_id = ?`,
    [org.id],
  );
  expect(envelope.id).toBe(outbox!.envelope_id);
  expect(envelope.created_at).toBe(outbox!.created_at);
  return envelope;
};

describe("each event type is delivered once, signed, with the record's id and name", () => {
  it("event.created, from creating an event", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const { id } = await db.run(Events.create(apiKeyActor(org.scope), { name: "Summer Gala", guests: 120 }));
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, { type: "event.created", dataId: id, dataName: "Summer Gala" });
    expect(envelope.data).toMatchObject({ guests: 120, status: "inquiry", currency: "EUR" });
  });

  it("client.created, from creating a client", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const { id } = await db.run(
      
      Clients.create(apiKeyActor(org.scope), { name: "Zoë's Café — “déjà vu” ✓", email: "zoe@example.com" }),
    
    );
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, {
      type: "client.created", dataId: id, dataName: "Zoë's Café — “déjà vu” ✓",
    });
    expect(envelope.data).toMatchObject({ email: "zoe@example.com" });
  });

  it("invoice.sent, named by the invoice number", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const invoiceId = await insertDraftInvoice(db, org.id, "INV-2026-0001");
    expect(await db.run(BusinessActions.sendInvoice(operatorActor(org.scope, "tests"), invoiceId))).toEqual({ id: invoiceId, status: "sent" });
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, {
      type: "invoice.sent", dataId: invoiceId, dataName: "INV-2026-0001",
    });
    expect(envelope.data).toMatchObject({ number: "INV-2026-0001", status: "sent" });
  });

  it("invoice.paid, named by the invoice number", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const invoiceId = await insertDraftInvoice(db, org.id, "INV-2026-0002", "sent");
    expect(await db.run(BusinessActions.payInvoice(operatorActor(org.scope, "tests"), invoiceId))).toEqual({ id: invoiceId, status: "paid" });
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, {
      type: "invoice.paid", dataId: invoiceId, dataName: "INV-2026-0002",
    });
    expect(envelope.data).toMatchObject({ number: "INV-2026-0002", status: "paid" });
  });

  it("proposal.approved, named by the proposal title", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const proposalId = await insertDraftProposal(db, org.id, "Wedding menu, option B");
    expect(await db.run(BusinessActions.approveProposal(operatorActor(org.scope, "tests"), proposalId))).toEqual({ id: proposalId, status: "approved" });
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, {
      type: "proposal.approved", dataId: proposalId, dataName: "Wedding menu, option B",
    });
    expect(envelope.data).toMatchObject({ status: "approved", total: 1234.56, currency: "EUR" });
  });

  it("event.inquiry, from an online catering request", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint();
    const { id, client_id } = await db.run(
      BusinessActions.receiveInquiry(operatorActor(org.scope, "tests"), { name: "Grace Hopper", email: "grace@example.com", guests: 40 }),
    );
    const envelope = await expectDeliveredOnce(org, target, endpoint.secret, {
      type: "event.inquiry", dataId: id, dataName: "Inquiry from Grace Hopper",
    });
    expect(envelope.data).toMatchObject({ status: "inquiry", client_id, guests: 40 });
  });
});

describe("subscriptions", () => {
  it("an endpoint subscribed to client.created gets only those; an unfiltered one gets everything", async () => {
    const { org, target: everything, endpoint: all } = await organizationWithEndpoint();
    const clientsOnly = await receiver();
    const filtered = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, clientsOnly.url, ["client.created"], generateSigningSecret())));

    const event = await db.run(Events.create(apiKeyActor(org.scope), { name: "Board dinner" }));
    const client = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Initech" }));
    await db.run(BusinessActions.receiveInquiry(operatorActor(org.scope, "tests"), { name: "Ada" }));
    const second = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Globex" }));

    const deliveries = await settledDeliveries(db, org.id, 6);
    expect(deliveries.every((d) => d.status === "succeeded")).toBe(true);
    expect(deliveries.filter((d) => d.endpoint_id === filtered.id).map((d) => d.event_type)).toEqual(["client.created", "client.created"]);
    expect(deliveries.filter((d) => d.endpoint_id === all.id).map((d) => d.event_type).sort()).toEqual(
      ["client.created", "client.created", "event.created", "event.inquiry"],
    );

    expect(clientsOnly.received.map((r) => [r.envelope.type, r.envelope.data.id]).sort()).toEqual(
      [["client.created", client.id], ["client.created", second.id]].sort(),
    );
    for (const request of clientsOnly.received) {
      await expectSignedEnvelope(request, { type: "client.created", secret: filtered.secret, dataId: request.envelope.data.id, dataName: request.envelope.data.name });
    }
    expect(everything.received).toHaveLength(4);
    expect(everything.received.map((r) => r.envelope.type).sort()).toEqual(
      ["client.created", "client.created", "event.created", "event.inquiry"],
    );
    expect(everything.received.find((r) => r.envelope.type === "event.created")!.envelope.data.id).toBe(event.id);
  });
});

describe("organization isolation", () => {
  it("events of one organization never reach another organization's endpoint", async () => {
    const a = await organizationWithEndpoint();
    const b = await organizationWithEndpoint();
    const aIds: number[] = [];
    for (const name of ["A one", "A two", "A three"]) aIds.push((await db.run(Events.create(apiKeyActor(a.org.scope), { name }))).id);
    const bId = (await db.run(Events.create(apiKeyActor(b.org.scope), { name: "B only" }))).id;

    const aDeliveries = await settledDeliveries(db, a.org.id, 3);
    const bDeliveries = await settledDeliveries(db, b.org.id, 1);
    expect(aDeliveries.every((d) => d.endpoint_id === a.endpoint.id && d.status === "succeeded")).toBe(true);
    expect(bDeliveries.every((d) => d.endpoint_id === b.endpoint.id && d.status === "succeeded")).toBe(true);

    expect(a.target.received.map((r) => r.envelope.data.id).sort()).toEqual([...aIds].sort());
    expect(b.target.received.map((r) => r.envelope.data.id)).toEqual([bId]);
    for (const request of a.target.received) {
      await expectSignedEnvelope(request, { type: "event.created", secret: a.endpoint.secret, dataId: request.envelope.data.id, dataName: request.envelope.data.name });
    }
    await expectSignedEnvelope(b.target.received[0]!, { type: "event.created", secret: b.endpoint.secret, dataId: bId, dataName: "B only" });
    const aEnvelopes = new Set(a.target.received.map((r) => r.envelope.id));
    expect(aEnvelopes.has(b.target.received[0]!.envelope.id)).toBe(false);
  });
});

describe("operations port", () => {
  it("answers /healthz and /readyz, and /metrics counts attempts and shows the queue depth", async () => {
    const health = await fetch(`${dispatcher.opsUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${dispatcher.opsUrl}/readyz`);
    expect(ready.status).toBe(200);

    // Every test above has settled: the counter equals the attempts stored, and nothing is pending.
    const [stored] = await sql<{ n: string }>(db, "select count(*) as n from webhook_attempts where status_code = 200");
    const metrics = await waitFor("metrics to catch up", async () => {
      const text = await (await fetch(`${dispatcher.opsUrl}/metrics`)).text();
      return metricValue(text, 'platter_webhook_attempts_total{outcome="succeeded"}') === Number(stored!.n) ? text : undefined;
    });
    expect(Number(stored!.n)).toBeGreaterThanOrEqual(16);
    expect(metrics).toContain("# TYPE platter_webhook_attempts_total counter");
    expect(metricValue(metrics, 'platter_webhook_attempts_total{outcome="failed"}')).toBe(0);
    expect(metricValue(metrics, 'platter_webhook_attempts_total{outcome="gone"}')).toBe(0);
    expect(metrics).toContain("# TYPE platter_webhook_queue_depth gauge");
    expect(metricValue(metrics, "platter_webhook_queue_depth")).toBe(0);
  });
});

describe("a rotated signing secret", () => {
  it("signs beside the new one during the overlap: receivers with either secret verify, the spec header carries the new one", async () => {
    const { org, target, endpoint } = await organizationWithEndpoint(["client.created"]);
    const rotated = await db.run(WebhookEndpointRepository.use((r) => r.rotateSecret(org.scope, endpoint.id, 24 * 3600_000, generateSigningSecret())));
    const { id } = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Rotation Ltd" }));
    await settledDeliveries(db, org.id, 1);
    const [request] = target.received;
    await expectSignedEnvelope(request!, { type: "client.created", secret: rotated.secret, dataId: id, dataName: "Rotation Ltd" });
    const headers = {
      "webhook-id": String(request!.headers["webhook-id"]),
      "webhook-timestamp": String(request!.headers["webhook-timestamp"]),
      "webhook-signature": String(request!.headers["webhook-signature"]),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    const raw = request!.rawBody.toString("utf8");
    for (const secret of [rotated.secret, endpoint.secret]) {
      expect(new StandardWebhook(secret).verify(raw, headers)).toEqual(JSON.parse(raw));
    }
  });
});
