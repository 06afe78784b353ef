import type { DueDelivery } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, DeliveryQueue, WebhookEndpointRepository } from "../src/index.ts";
import { createOrganization, createTestDatabase, nothingHeld, type TestDatabase, testDeliveryPolicy } from "../src/testing/index.ts";
import { claimStatement } from "../src/webhooks/delivery-queue.ts";

/**
 * A claim reads and locks rows in proportion to the slots it fills, not to the endpoints with
 * work: it walks a bounded number of organizations and endpoints from a random one onwards, so
 * over successive claims every endpoint gets its turn.
 */

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** An organization with `endpoints` endpoints (each on an origin of its own) and one due delivery at each. */
const organizationWithEndpoints = async (name: string, endpoints: number) => {
  const org = await createOrganization(db, name);
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://${name.toLowerCase()}-0.example/hook`, [])));
  await db.run(ClientRepository.use((r) => r.create(org.scope, { name: "A client" })));
  // The rest straight in the table (past the endpoint limit), each with a delivery of that message.
  await rows(
    `with e as (
       insert into webhook_endpoints (organization_id, url, origin, secret, event_types)
       select ?, 'https://' || ? || '-' || g || '.example/hook', 'https://' || ? || '-' || g || '.example', 'whsec_x', '{}'
       from generate_series(1, ? - 1) g returning id)
     insert into webhook_deliveries (organization_id, endpoint_id, message_id, next_attempt_at)
     select ?, e.id, (select id from webhook_messages where organization_id = ?), now() - interval '1 minute' from e`,
    [org.id, name.toLowerCase(), name.toLowerCase(), endpoints, org.id, org.id],
  );
  await rows("update webhook_deliveries set next_attempt_at = now() - interval '1 minute' where organization_id = ?", [org.id]);
  return org;
};

/** Every block of table or index a claim of `limit` touches, from its plan (the claim runs: it leases what it claims). */
const blocksTouched = async (limit: number): Promise<{ blocks: number; claimed: number }> => {
  const claim = claimStatement(limit, 60_000, testDeliveryPolicy, nothingHeld, new Date());
  const [plan] = await rows<{ "QUERY PLAN": Array<{ Plan: { "Actual Rows": number } & Record<string, number> }> }>(
    `explain (analyze, buffers, format json) ${claim.text}`, claim.values,
  );
  const top = plan!["QUERY PLAN"][0]!.Plan;
  return { blocks: top["Shared Hit Blocks"]! + top["Shared Read Blocks"]!, claimed: top["Actual Rows"] };
};

const settleEverything = () =>
  rows("update webhook_deliveries set status = 'succeeded', completed_at = now(), lease_token = null, lease_expires_at = null where status = 'pending'");

describe("a claim", () => {
  it("touches as many blocks beside one organization's 3,000 endpoints with work as beside 100", async () => {
    await organizationWithEndpoints("Hundred", 100);
    const hundred = await blocksTouched(16);
    await settleEverything();
    await organizationWithEndpoints("Thousands", 3000);
    const thousands = await blocksTouched(16);
    await settleEverything();
    console.info(`blocks touched by a claim of 16: ${hundred.blocks} beside 100 endpoints, ${thousands.blocks} beside 3,000`);
    expect([hundred.claimed, thousands.claimed]).toEqual([16, 16]);
    expect(thousands.blocks).toBeLessThan(2 * hundred.blocks);
  });

  it("finds another organization's one endpoint at once, and every endpoint of a big one in turn", async () => {
    const big = await organizationWithEndpoints("Big", 400);
    const small = await organizationWithEndpoints("Small", 1);
    const claim = (limit: number) => db.run(DeliveryQueue.use((q) => q.claimDue(limit, 60_000, testDeliveryPolicy, nothingHeld)));
    const first = (await claim(4)).due;
    expect(first.filter((d) => d.organizationId === small.id)).toHaveLength(1);

    // Claimed deliveries stay leased, so each claim must find endpoints it has not served yet.
    const served = new Set<number>(first.map((d) => d.endpointId));
    const claims: DueDelivery[][] = [];
    while (served.size < 401 && claims.length < 1000) {
      const { due } = await claim(10);
      claims.push(due);
      for (const d of due) served.add(d.endpointId);
    }
    console.info(`every endpoint of 400 served after ${claims.length} claims of 10`);
    expect(served.size).toBe(401);
    expect(claims.flat().every((d) => d.organizationId === big.id)).toBe(true);
    await settleEverything();
  });
});
