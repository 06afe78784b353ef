import { DeliveryRepository, WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type Answer, deliveriesOf, type DispatcherProcess, endpointsOf, freePort, killLeftoverDispatchers, type ReceivedRequest,
  type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";
import { expectSignedEnvelope } from "./envelope-checks.ts";
import { Events } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * Retries, time-outs, refused connections, an exhausted schedule and 410 Gone, against one
 * dispatcher process with a four-try schedule (at once, then 300 ms apart).
 */

const SCHEDULE = "0s,300ms,300ms,300ms";
const TRIES = 4;

let db: TestDatabase;
let dispatcher: DispatcherProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_RETRY_SCHEDULE: SCHEDULE, WEBHOOK_TIMEOUT: "1s", WEBHOOK_LEASE: "2s" });
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dispose();
});

const receiver = async (answer: (request: ReceivedRequest, previous: number) => Answer, port?: number) => {
  const started = await startReceiver(answer, port);
  receivers.push(started);
  return started;
};

/** An organization with one endpoint at `url`; `createEvent` fires one `event.created`. */
const organizationWithEndpoint = async (url: string) => {
  const org = await createOrganization(db, "Retry Caterers");
  const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, url, [], generateSigningSecret())));
  const createEvent = (name: string) => db.run(Events.create(apiKeyActor(org.scope), { name }));
  return { org, endpoint, createEvent };
};

/** Every request carries the same envelope id and byte-identical, identically signed bodies. */
const expectIdenticalResends = (requests: ReceivedRequest[]) => {
  const [first, ...rest] = requests;
  for (const request of rest) {
    expect(request.rawBody.equals(first!.rawBody)).toBe(true);
    expect(request.envelope.id).toBe(first!.envelope.id);
    expect(request.headers["x-platter-signature"]).toBe(first!.headers["x-platter-signature"]);
  }
};

describe("retries", () => {
  it("500, 500, then 200: three attempts, the same envelope and bytes each time, all recorded", async () => {
    const target = await receiver((_, previous) =>
      previous < 2 ? { status: 500, body: `overloaded ${"!".repeat(3000)}` } : { status: 200, body: "thanks" },
    );
    const { org, endpoint, createEvent } = await organizationWithEndpoint(target.url);
    const { id } = await createEvent("Retried gala");

    const [delivery] = await settledDeliveries(db, org.id, 1);
    expect(delivery).toMatchObject({ status: "succeeded", next_attempt_at: null });
    expect(delivery!.attempts.map((a) => [a.attempt, a.status_code, a.error])).toEqual([[1, 500, null], [2, 500, null], [3, 200, null]]);
    const [first, second, third] = delivery!.attempts;
    expect(first!.response_body).toBe(`overloaded ${"!".repeat(3000)}`.slice(0, 1024));
    expect(third!.response_body).toBe("thanks");
    expect(first!.next_attempt_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(second!.next_attempt_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(third!.next_attempt_at).toBeNull();
    for (const attempt of delivery!.attempts) expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);

    expect(target.received).toHaveLength(3);
    expectIdenticalResends(target.received);
    await expectSignedEnvelope(target.received[2]!, { type: "event.created", secret: endpoint.secret, dataId: id, dataName: "Retried gala" });
    expect(target.received[0]!.envelope.id).toBe(delivery!.envelope_id);
  });

  it("a time-out, then success", async () => {
    const target = await receiver((_, previous) => (previous === 0 ? { status: 200, delayMs: 2500 } : { status: 200 }));
    const { org, createEvent } = await organizationWithEndpoint(target.url);
    await createEvent("Slow receiver");

    const [delivery] = await settledDeliveries(db, org.id, 1);
    expect(delivery!.status).toBe("succeeded");
    expect(delivery!.attempts).toHaveLength(2);
    expect(delivery!.attempts[0]).toMatchObject({ attempt: 1, status_code: null, response_body: null });
    expect(delivery!.attempts[0]!.error).toMatch(/time(d)?\s?out/i);
    expect(delivery!.attempts[0]!.next_attempt_at).not.toBeNull();
    expect(delivery!.attempts[1]).toMatchObject({ attempt: 2, status_code: 200, error: null, next_attempt_at: null });
    expect(target.received).toHaveLength(2);
    expectIdenticalResends(target.received);
  });

  it("a refused connection, then success once a receiver listens on the port", async () => {
    const port = await freePort();
    const { org, createEvent } = await organizationWithEndpoint(`http://127.0.0.1:${port}/webhooks`);
    await createEvent("Receiver not up yet");

    await waitFor("the first, refused attempt", async () => (await deliveriesOf(db, org.id))[0]?.attempts.length === 1);
    const target = await receiver(() => ({ status: 200 }), port);

    const [delivery] = await settledDeliveries(db, org.id, 1);
    expect(delivery!.status).toBe("succeeded");
    const attempts = delivery!.attempts;
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const refused of attempts.slice(0, -1)) {
      expect(refused).toMatchObject({ status_code: null, response_body: null });
      expect(refused.error).toMatch(/^ECONNREFUSED/);
      expect(refused.next_attempt_at).not.toBeNull();
    }
    expect(attempts.at(-1)).toMatchObject({ status_code: 200, error: null, next_attempt_at: null });
    expect(target.received).toHaveLength(1);
    expect(target.received[0]!.envelope.id).toBe(delivery!.envelope_id);
  });

  it("an exhausted schedule fails the delivery; an operator retry resends the same bytes", async () => {
    let healthy = false;
    const target = await receiver(() => (healthy ? { status: 200 } : { status: 503, body: "down" }));
    const { org, endpoint, createEvent } = await organizationWithEndpoint(target.url);
    await createEvent("Never answered");

    const [failed] = await settledDeliveries(db, org.id, 1);
    expect(failed).toMatchObject({ status: "failed", next_attempt_at: null });
    expect(failed!.attempts.map((a) => [a.attempt, a.status_code, a.response_body])).toEqual(
      Array.from({ length: TRIES }, (_, i) => [i + 1, 503, "down"]),
    );
    expect(failed!.attempts.slice(0, -1).every((a) => a.next_attempt_at !== null)).toBe(true);
    expect(failed!.attempts.at(-1)!.next_attempt_at).toBeNull();
    expect(target.received).toHaveLength(TRIES);
    // Failing for less than the failure window leaves the endpoint enabled.
    expect((await endpointsOf(db, org.id))[0]).toMatchObject({ id: endpoint.id, enabled: true, disabled_reason: null });

    healthy = true;
    expect(await db.run(DeliveryRepository.use((r) => r.retry(org.scope, failed!.id)))).toEqual({ retried: 1 });
    const [retried] = await settledDeliveries(db, org.id, 1);
    expect(retried).toMatchObject({ id: failed!.id, status: "succeeded" });
    expect(retried!.attempts).toHaveLength(TRIES + 1);
    expect(retried!.attempts.at(-1)).toMatchObject({ attempt: TRIES + 1, status_code: 200 });
    expect(target.received).toHaveLength(TRIES + 1);
    expectIdenticalResends(target.received);
  });
});

describe("410 Gone", () => {
  it("disables the endpoint with a reason; later events are not delivered to it until it is enabled again", async () => {
    let gone = true;
    const target = await receiver(() => (gone ? { status: 410, body: "no such hook" } : { status: 200 }));
    const { org, endpoint, createEvent } = await organizationWithEndpoint(target.url);
    await createEvent("Before the 410");

    const [goneDelivery] = await settledDeliveries(db, org.id, 1);
    expect(goneDelivery).toMatchObject({ status: "failed" });
    expect(goneDelivery!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 410, response_body: "no such hook", next_attempt_at: null }),
    ]);
    const [disabled] = await waitFor("the endpoint to be disabled", async () => {
      const endpoints = await endpointsOf(db, org.id);
      return endpoints[0]?.enabled === false ? endpoints : undefined;
    });
    expect(disabled).toMatchObject({ id: endpoint.id, enabled: false, disabled_reason: "endpoint answered 410 Gone" });

    await createEvent("After the 410");
    // Recorded as a message, with no delivery: a disabled endpoint is not subscribed.
    const [messages] = await sql<{ n: string }>(db, "select count(*) as n from webhook_messages where organization_id = ?", [org.id]);
    expect(Number(messages!.n)).toBeGreaterThan(1);
    expect(await deliveriesOf(db, org.id)).toHaveLength(1);
    expect(target.received).toHaveLength(1);

    // Re-enabled, and its failed delivery retried: the same envelope arrives again.
    gone = false;
    await db.run(WebhookEndpointRepository.use((r) => r.setEnabled(org.scope, endpoint.id, true)));
    expect(await db.run(DeliveryRepository.use((r) => r.retryFailed(org.scope, endpoint.id)))).toEqual({ retried: 1 });
    const [redelivered] = await settledDeliveries(db, org.id, 1);
    expect(redelivered).toMatchObject({ id: goneDelivery!.id, status: "succeeded" });
    expect(target.received).toHaveLength(2);
    expectIdenticalResends(target.received);
    expect((await endpointsOf(db, org.id))[0]).toMatchObject({ enabled: true, disabled_reason: null });
  });
});
