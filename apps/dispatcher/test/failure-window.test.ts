import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DispatcherProcess, endpointsOf, killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver,
  waitFor,
} from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * An endpoint whose deliveries all fail for the whole failure window is disabled; one success
 * inside the window starts it afresh. The window is shortened to 1 s and tries come 400 ms apart.
 */

let db: TestDatabase;
let dispatcher: DispatcherProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  dispatcher = await startDispatcherProcess(db.url, {
    WEBHOOK_RETRY_SCHEDULE: "0s,400ms,400ms,400ms,400ms,400ms,400ms",
    WEBHOOK_FAILURE_WINDOW: "1s",
  });
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await Promise.all(receivers.map((r) => r.close()));
  await db?.dispose();
});

const endpointFor = async (answer: (previous: number) => number) => {
  const receiver = await startReceiver((_, previous) => ({ status: answer(previous) }));
  receivers.push(receiver);
  const org = await createOrganization(db, "Window Caterers");
  const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, receiver.url, [], generateSigningSecret())));
  await db.run(Clients.create(apiKeyActor(org.scope), { name: "Ada" }));
  return { org, endpoint, receiver };
};

describe("the failure window", () => {
  it("disables an endpoint whose deliveries fail for longer than the window", async () => {
    const { org, endpoint, receiver } = await endpointFor(() => 500);
    const disabled = await waitFor(
      "the endpoint to be disabled",
      async () => (await endpointsOf(db, org.id)).find((e) => !e.enabled),
      15_000,
    );
    expect(disabled).toMatchObject({ id: endpoint.id, enabled: false, disabled_reason: "every delivery failed for the whole failure window" });
    // It was tried until the window ran out (more than 1 s of failures), not disabled at the first failure.
    expect(receiver.received.length).toBeGreaterThanOrEqual(3);
    // A disabled endpoint is not tried any more.
    const tries = receiver.received.length;
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.received.length).toBe(tries);
  });

  it("keeps an endpoint that succeeds inside the window, and clears its failing streak", async () => {
    const { org, endpoint, receiver } = await endpointFor((previous) => (previous < 2 ? 500 : 200));
    await waitFor(
      "the delivery to succeed",
      async () =>
        (await sql<{ status: string }>(db, "select status from webhook_deliveries where endpoint_id = ?", [endpoint.id]))[0]
          ?.status === "succeeded",
      15_000,
    );
    expect(receiver.received.length).toBe(3);
    const [state] = await sql<{ enabled: boolean; failing_since: string | null }>(
      db,
      "select enabled, failing_since from webhook_endpoints where id = ?",
      [endpoint.id],
    );
    expect(state).toEqual({ enabled: true, failing_since: null });
    expect((await endpointsOf(db, org.id))[0]!.enabled).toBe(true);
  });
});
