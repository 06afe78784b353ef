import { generateSigningSecret, NotFound } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryRepository, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * OrgSql's joins are confined to the scope by OrgSql itself, tables and nested selects alike: a row
 * of another organization is never joined in, even through a foreign key that points at it.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

describe("OrgSql joins", () => {
  it("join only the scope's rows: a delivery pointing at another organization's message and attempts shows neither", async () => {
    const a = await createOrganization(db, "A");
    const b = await createOrganization(db, "B");
    for (const org of [a, b]) {
      await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://198.51.100.7${org.id % 10}/hook`, [], generateSigningSecret())));
      await db.run(createClient(org.scope, { name: "Client" }));
    }
    const [deliveryOfA] = await rows<{ id: string }>("select id from webhook_deliveries where organization_id = ?", [a.id]);
    const [deliveryOfB] = await rows<{ id: string; message_id: string }>("select id, message_id from webhook_deliveries where organization_id = ?", [b.id]);
    await rows(
      `insert into webhook_attempts (organization_id, delivery_id, delivery_created_at, attempt, started_at, duration_ms, status_code)
       select ?, d.id, d.created_at, 1, now(), 5, 500 from webhook_deliveries d where d.id = ?`, [b.id, deliveryOfA!.id],
    );
    // Only the joined attempt of B exists for A's delivery: the lateral join leaves it out.
    expect((await db.run(DeliveryRepository.use((r) => r.find(a.scope, Number(deliveryOfA!.id))))).attempts).toEqual([]);
    // A's delivery made to point at B's message: the table join finds no message of A, so no row.
    await rows("update webhook_deliveries set message_id = ? where id = ?", [deliveryOfB!.message_id, deliveryOfA!.id]);
    const found = await db.run(Effect.flip(DeliveryRepository.use((r) => r.find(a.scope, Number(deliveryOfA!.id)))));
    expect(found).toBeInstanceOf(NotFound);
  });
});
