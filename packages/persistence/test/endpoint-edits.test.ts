import { AUDIT_DETAILS_MAX_BYTES, generateSigningSecret, operatorActor } from "@platter/domain";
import { createOrganization, createTestDatabase, nothingHeld, type TestDatabase, testDeliveryPolicy } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { AuditLog, inOneTransaction, WebhookEndpointRepository } from "../src/index.ts";
import { createClient } from "./created-records.ts";

/**
 * An edited endpoint's deliveries not yet sent go to its new URL: the claim reads the endpoint's URL
 * and origin when it takes them, and the edit writes both.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("an endpoint's edit", () => {
  it("sends its pending deliveries to the new URL, counted at the new origin", async () => {
    const org = await createOrganization(db, "Moving");
    const { id } = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://old.example/hook", [], generateSigningSecret())));
    await db.run(createClient(org.scope, { name: "Queued before the edit" }));
    const locked = await db.run(inOneTransaction(WebhookEndpointRepository.use((r) => r.lockForEdit(org.scope, id))));
    expect(locked).toEqual({ url: "https://old.example/hook", event_types: [], description: null, enabled: true, listener: false });
    await db.run(WebhookEndpointRepository.use((r) =>
      r.edit(org.scope, id, { url: "https://New.example:8443/hook", eventTypes: ["client.created", "invoice.paid"], description: "moved" })));
    const { due } = await db.run(DeliveryQueue.use((queue) => queue.claimDue(10, 60_000, testDeliveryPolicy, nothingHeld)));
    expect(due.map((delivery) => ({ endpointId: delivery.endpointId, url: delivery.url, origin: delivery.origin }))).toEqual([
      { endpointId: id, url: "https://New.example:8443/hook", origin: "https://new.example:8443" },
    ]);
    const [endpoint] = await db.run(WebhookEndpointRepository.use((r) => r.list(org.scope)));
    expect(endpoint).toMatchObject({ event_types: ["client.created", "invoice.paid"], description: "moved" });
  });

  it("keeps its audit details within their bound: the column refuses more", async () => {
    const org = await createOrganization(db, "Bounded details");
    const record = (description: string) =>
      db.run(Effect.asVoid(AuditLog.use((log) =>
        log.record(operatorActor(org.scope, "root"), "webhook_endpoint.updated", "webhook_endpoint 1", { before: { description: null }, after: { description } }))));
    await record("fits");
    await expect(record("x".repeat(AUDIT_DETAILS_MAX_BYTES))).rejects.toThrow(/audit_log_details_check/);
    const entries = await db.run(AuditLog.use((log) => log.list(org.scope, 10)));
    expect(entries.map((entry) => entry.details)).toEqual([{ before: { description: null }, after: { description: "fits" } }]);
  });
});
