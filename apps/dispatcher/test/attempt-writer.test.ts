import { type AttemptRecord, exampleMessage, generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { createOrganization, createTestDatabase, nothingHeld, type TestDatabase, testDeliveryPolicy } from "@platter/testing";
import { AttemptWriter } from "@platter/webhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sql } from "./dispatcher-harness.ts";

/**
 * The dispatcher's batched attempt writer on PostgreSQL: a result the database refuses (here a
 * lease token that is no UUID, which no sanitising can mend) costs no other organization's results
 * of its batch; it alone is reported as an error.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("the attempt writer", () => {
  it("writes every good result of a batch when the database refuses one organization's, and reports that one", async () => {
    for (const name of ["Writer A", "Writer B", "Writer C"]) {
      const org = await createOrganization(db, name);
      const endpoint = await db.run(WebhookEndpointRepository.use((all) => all.add(org.scope, "https://203.0.113.7/hook", [], generateSigningSecret())));
      for (let i = 0; i < 3; i++) {
        await db.run(WebhookEndpointRepository.use((all) => all.sendTestMessage(org.scope, endpoint.id, exampleMessage("event.created"))));
      }
    }
    const queue = await db.run(DeliveryQueue);
    const { due } = await db.run(queue.claimDue(100, 60_000, testDeliveryPolicy, nothingHeld));
    expect(due.length).toBe(9);
    const poisoned = due[4]!;
    const errors: unknown[] = [];
    let writtenBatches = 0;
    const writer = new AttemptWriter(queue, testDeliveryPolicy, (error) => errors.push(error), () => writtenBatches++);
    for (const delivery of due) {
      const record: AttemptRecord = {
        delivery: delivery === poisoned ? { ...delivery, leaseToken: "not-a-uuid" } : delivery,
        startedAt: new Date(), durationMs: 5, statusCode: 200, error: undefined, responseBody: "ok", outcome: "succeeded",
      };
      writer.add(record);
    }
    await writer.flush();
    const attempted = await sql<{ delivery_id: string }>(db, "select delivery_id from webhook_attempts order by delivery_id");
    expect(attempted.map((row) => Number(row.delivery_id))).toEqual(due.filter((d) => d !== poisoned).map((d) => d.id).sort((x, y) => x - y));
    const statuses = await sql<{ id: string; status: string }>(db, "select id, status from webhook_deliveries order by id");
    expect(statuses.filter((row) => row.status === "succeeded").length).toBe(8);
    expect(statuses.find((row) => Number(row.id) === poisoned.id)?.status).toBe("pending");
    expect(errors.length).toBe(1);
    expect(writtenBatches).toBe(1);
  });
});
