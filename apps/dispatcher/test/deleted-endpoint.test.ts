import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Events, WebhookEndpoints } from "@platter/application";
import { apiKeyActor, generateSigningSecret, operatorActor, SETTLED_ENDPOINT_DELETED } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DispatcherProcess, killLeftoverDispatchers, type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";

/**
 * An endpoint deleted while a real dispatcher is sending to it. The dispatcher holds the delivery's
 * lease and has the request on the wire: it cannot be called back, so the receiver does get that one
 * request. What the delete guarantees is that its late result records nothing harmful: the attempt
 * is logged as it happened, but the delivery stays ended ("endpoint deleted": the delete cleared its
 * lease, and only the holder moves it), the deleted endpoint's row is not touched (no failures
 * counted, no disabled reason of its own, no notice), and nothing is sent to it again.
 */

let db: TestDatabase;
let dispatcher: DispatcherProcess;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  // Long enough that the held request is answered, not timed out, and its lease does not lapse meanwhile.
  dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_TIMEOUT: "15s", WEBHOOK_LEASE: "30s" });
});

afterAll(async () => {
  if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  await killLeftoverDispatchers();
  await Promise.all(closers.map((close) => close()));
  await db?.dispose();
});

/** A receiver on 127.0.0.1 that holds every request until the test answers it with `answer(status)`. */
const heldReceiver = async () => {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => held.push(res));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  closers.push(() => new Promise((done) => {
    server.closeAllConnections();
    server.close(() => done());
  }));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/held`,
    received: () => held.length,
    answer: (status: number) => {
      for (const res of held) if (!res.writableEnded) res.writeHead(status, { "content-type": "text/plain" }).end("late answer");
    },
  };
};

const witness = async (): Promise<Receiver> => {
  const started = await startReceiver(() => ({ status: 200 }));
  closers.push(started.close);
  return started;
};

describe("deleting an endpoint while a dispatcher is sending to it", () => {
  it.each([
    ["410 Gone (which would disable the endpoint and write a notice)", 410],
    ["500 (which would count a failure and open the circuit)", 500],
  ])("a late %s records the attempt and nothing else", async (_name, status) => {
    const org = await createOrganization(db, `Deleted mid-send ${status}`);
    const target = await heldReceiver();
    const other = await witness();
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, other.url, [], generateSigningSecret())));

    await db.run(Events.create(apiKeyActor(org.scope), { name: "Sent as it is deleted" }));
    await waitFor("the dispatcher's request to the endpoint", () => target.received() === 1);
    const [leased] = await sql<{ lease_token: string | null }>(db, "select lease_token from webhook_deliveries where endpoint_id = ?", [endpoint.id]);
    expect(leased!.lease_token).not.toBeNull();

    const deleted = await db.run(WebhookEndpoints.delete(operatorActor(org.scope, "root via the CLI"), endpoint.id));
    expect(deleted.ended).toBe(1);
    target.answer(status);

    const [attempt] = await waitFor("the late attempt to be recorded", async () => {
      const attempts = await sql<{ status_code: number; next_attempt_at: string | null }>(db,
        "select a.status_code, a.next_attempt_at from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.endpoint_id = ?", [endpoint.id]);
      return attempts.length > 0 && attempts;
    });
    // The attempt happened, and the log says so; no next try is promised.
    expect(attempt).toEqual({ status_code: status, next_attempt_at: null });
    expect(await sql(db, "select status, settled_reason, lease_token from webhook_deliveries where endpoint_id = ?", [endpoint.id]))
      .toEqual([{ status: "failed", settled_reason: SETTLED_ENDPOINT_DELETED, lease_token: null }]);
    expect(await sql(db, `select enabled, disabled_reason, consecutive_failures, failing_since, circuit_open_until, notice_stage, secret
      from webhook_endpoints where id = ?`, [endpoint.id])).toEqual([{
      enabled: false, disabled_reason: "endpoint deleted", consecutive_failures: 0, failing_since: null, circuit_open_until: null,
      notice_stage: null, secret: null,
    }]);
    expect(await sql(db, "select kind from endpoint_notices where endpoint_id = ?", [endpoint.id])).toEqual([]);

    // A later event goes to the organization's other endpoint only; once it is delivered, the deleted one still got just the one request.
    await db.run(Events.create(apiKeyActor(org.scope), { name: "After the delete" }));
    await settledDeliveries(db, org.id, 3);
    expect(other.received).toHaveLength(2);
    expect(target.received()).toBe(1);
  });
});
