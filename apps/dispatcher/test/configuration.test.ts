import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, settledDeliveries, startDispatcherProcess, startReceiver } from "./dispatcher-harness.ts";
import { expectSignedEnvelope } from "./envelope-checks.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/** Settings that change what a dispatcher process does: the SSRF guard and the signature header. */

let db: TestDatabase;
const receivers: Receiver[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});

afterEach(async () => {
  await killLeftoverDispatchers();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

afterAll(() => db?.dispose());

const receiver = async () => {
  const started = await startReceiver();
  receivers.push(started);
  return started;
};

describe("SSRF guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS unset)", () => {
  it("never connects to 127.0.0.1 or to a name resolving to it, and records the refusal", async () => {
    const dispatcher = await startDispatcherProcess(db.url, {
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: undefined,
      WEBHOOK_RETRY_SCHEDULE: "0s,100ms",
    });
    const org = await createOrganization(db, "Guarded Caterers");
    const byAddress = await receiver();
    const byName = await receiver();
    const literal = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, byAddress.url, [], generateSigningSecret())));
    const named = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, byName.url.replace("127.0.0.1", "localhost"), [], generateSigningSecret())));
    await db.run(Clients.create(apiKeyActor(org.scope), { name: "Internal Corp" }));

    const deliveries = await settledDeliveries(db, org.id, 2);
    for (const delivery of deliveries) {
      expect(delivery.status).toBe("failed");
      expect(delivery.attempts).toHaveLength(2);
      for (const attempt of delivery.attempts) expect(attempt).toMatchObject({ status_code: null, response_body: null });
    }
    const errorsOf = (endpointId: number) => deliveries.find((d) => d.endpoint_id === endpointId)!.attempts.map((a) => a.error);
    const refused = (host: string) => `ESSRF: refused: ${host} is not allowed: webhooks are sent only to public internet addresses`;
    expect(errorsOf(literal.id)).toEqual(Array(2).fill(refused("127.0.0.1")));
    expect(errorsOf(named.id)).toEqual(Array(2).fill(refused("localhost")));
    expect(byAddress.received).toHaveLength(0);
    expect(byName.received).toHaveLength(0);

    expect((await dispatcher.terminate()).code).toBe(0);
  });
});

describe("WEBHOOK_SIGNATURE_HEADER", () => {
  it("names the header that carries the signature", async () => {
    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_SIGNATURE_HEADER: "X-Acme-Signature" });
    const org = await createOrganization(db, "Branded Caterers");
    const target = await receiver();
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
    const { id } = await db.run(Clients.create(apiKeyActor(org.scope), { name: "Acme" }));

    const [delivery] = await settledDeliveries(db, org.id, 1);
    expect(delivery!.status).toBe("succeeded");
    expect(target.received).toHaveLength(1);
    expect(target.received[0]!.headers["x-platter-signature"]).toBeUndefined();
    await expectSignedEnvelope(target.received[0]!, {
      type: "client.created", secret: endpoint.secret, dataId: id, dataName: "Acme", signatureHeader: "x-acme-signature",
    });

    expect((await dispatcher.terminate()).code).toBe(0);
  });
});
