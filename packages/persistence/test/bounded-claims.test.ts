import { generateSigningSecret } from "@platter/domain";
import type { DueDelivery, HeldSlots } from "@platter/domain";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, nothingHeld, sealSecretsWrittenInClear, type TestDatabase, testDeliveryPolicy, withRawClient } from "@platter/testing";
import { claimStatement } from "../src/webhooks/delivery-claim.ts";
import { createClient } from "./created-records.ts";

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
  await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://${name.toLowerCase()}-0.example/hook`, [], generateSigningSecret())));
  await db.run(createClient(org.scope, { name: "A client" }));
  // The rest straight in the table (past the endpoint limit), each with a delivery of that message.
  await rows(
    `with e as (
       insert into webhook_endpoints (organization_id, url, origin, secret, event_types)
       select ?, 'https://' || ? || '-' || g || '.example/hook', 'https://' || ? || '-' || g || '.example', 'whsec_x', '{}'
       from generate_series(1, ? - 1) g returning id)
     insert into webhook_deliveries (organization_id, endpoint_id, message_id, created_at, next_attempt_at)
     select ?, e.id, m.id, m.created_at, now() - interval '1 minute' from e, (select id, created_at from webhook_messages where organization_id = ?) m`,
    [org.id, name.toLowerCase(), name.toLowerCase(), endpoints, org.id, org.id],
  );
  await rows("update webhook_deliveries set next_attempt_at = now() - interval '1 minute' where organization_id = ?", [org.id]);
  await sealSecretsWrittenInClear(db);
  return org;
};

/** Every block of table or index a claim of `limit` touches, from its plan (the claim runs: it leases what it claims). */
const blocksTouched = async (limit: number): Promise<{ blocks: number; claimed: number }> => {
  const claim = claimStatement(limit, 60_000, testDeliveryPolicy, nothingHeld);
  const [plan] = await rows<{ "QUERY PLAN": Array<{ Plan: { "Actual Rows": number } & Record<string, number> }> }>(
    `explain (analyze, buffers, format json) ${claim.text}`, claim.values,
  );
  const top = plan!["QUERY PLAN"][0]!.Plan;
  return { blocks: top["Shared Hit Blocks"]! + top["Shared Read Blocks"]!, claimed: top["Actual Rows"] };
};

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly Plans?: ReadonlyArray<PlanNode>;
}

/**
 * Blocks touched by a claim of `limit`, and how it reads webhook_deliveries (index names), in the
 * plan PostgreSQL keeps for a prepared statement: the generic plan a dispatcher's pooled
 * connection uses after a few claims. On a connection of its own.
 */
const blocksTouchedByGenericPlan = async (
  limit: number, held: HeldSlots,
): Promise<{ blocks: number; claimed: number; scans: string[] }> =>
  withRawClient(db.url, async (client) => {
    const claim = claimStatement(limit, 60_000, testDeliveryPolicy, held);
    let n = 0;
    await client.query("set plan_cache_mode = force_generic_plan");
    await client.query(`prepare claim as ${claim.text.replace(/\?/g, () => `$${++n}`)}`);
    const args = claim.values.map((v) => `'${String(v).replaceAll("'", "''")}'`).join(", ");
    await client.query("begin");
    const { rows: [plan] } = await client.query(`explain (analyze, buffers, format json) execute claim(${args})`);
    await client.query("rollback");
    const top = plan["QUERY PLAN"][0].Plan;
    const scans: string[] = [];
    const visit = (node: PlanNode) => {
      // Partitioned by time: each partition's copy of an index, named after the partition and its columns.
      if (node["Relation Name"]?.startsWith("webhook_deliveries") === true && node["Node Type"] !== "ModifyTable") {
        const index = node["Index Name"];
        scans.push(index === undefined ? `${node["Node Type"]} on ${node["Relation Name"]}`
          : index.endsWith("_pkey") ? "webhook_deliveries_pkey"
          : /_organization_id_endpoint_id_n\w*_idx$|^webhook_deliveries_due_idx$/.test(index) ? "webhook_deliveries_due_idx" : index);
      }
      for (const child of node.Plans ?? []) visit(child);
    };
    visit(top);
    return { blocks: top["Shared Hit Blocks"] + top["Shared Read Blocks"], claimed: top["Actual Rows"], scans };
  });

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

  it("touches as many blocks beside its endpoint's backlog of 40,000 as beside 1,000, in its generic plan too", async () => {
    // One endpoint's backlog being drained: its settled deliveries leave the due index but stay in
    // the table (kept as history), the rest wait.
    const org = await organizationWithEndpoints("Backlog", 1);
    const [endpoint] = await rows<{ id: string }>("select id from webhook_endpoints where organization_id = ?", [org.id]);
    const backlog = async (pending: number) => {
      await rows(
        `with m as (
           insert into webhook_messages (organization_id, type, payload)
           select ?, 'client.created', '{"version":1,"data":{}}' from generate_series(1, 1000 + ?) returning id)
         insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, next_attempt_at)
         select ?, ?, id, case when row_number() over (order by id) <= 1000 then 'succeeded' else 'pending' end,
           now() - interval '1 minute'
         from m`,
        [org.id, pending, org.id, endpoint!.id],
      );
      await rows("analyze webhook_deliveries");
    };
    const held: HeldSlots = {
      ...nothingHeld, share: 256, organizationShare: 256, originConnections: 64, originShare: 48,
      inFlight: new Map([[Number(endpoint!.id), 16]]), inFlightByOrganization: new Map([[org.id, 16]]),
    };
    await backlog(1_000);
    const small = await blocksTouchedByGenericPlan(32, held);
    await settleEverything();
    await backlog(40_000);
    const large = await blocksTouchedByGenericPlan(32, held);
    await settleEverything();
    console.info(`blocks touched by a generic claim of 32: ${small.blocks} beside a backlog of 1,000, ${large.blocks} beside 40,000`);
    expect([small.claimed, large.claimed]).toEqual([32, 32]);
    expect(large.blocks).toBeLessThan(1.5 * small.blocks);
    // It finds deliveries through the due index only (the update then through the primary key):
    // never a scan of the table or of an endpoint's whole history.
    // (A partition made ahead holds nothing yet: the planner reads it whole, which costs nothing.)
    const seqScanned = large.scans.filter((scan) => scan.startsWith("Seq Scan on ")).map((scan) => scan.slice("Seq Scan on ".length));
    for (const partition of seqScanned) expect(await rows(`select 1 from ${partition} limit 1`)).toEqual([]);
    expect(new Set(large.scans.filter((scan) => !scan.startsWith("Seq Scan on ")))).toEqual(new Set(["webhook_deliveries_due_idx", "webhook_deliveries_pkey"]));
  });

  it("starts its walk at a random organization among those with work, however many have none", async () => {
    // 20 organizations with work, then 180 (of higher ids) without: a start drawn over every
    // organization's id would land above the 20 nine times in ten, and serve the highest first.
    const busy: number[] = [];
    for (let i = 0; i < 20; i++) busy.push((await organizationWithEndpoints(`Turn${i}`, 1)).id);
    for (let i = 0; i < 180; i++) await createOrganization(db, `Idle ${i}`);
    // One organization per claim; each lease lasts 1 ms, so every claim finds all 20 with work again.
    const firsts = new Map<number, number>();
    for (let i = 0; i < 100; i++) {
      const { due } = await db.run(DeliveryQueue.use((q) => q.claimDue(1, 1, testDeliveryPolicy, nothingHeld)));
      firsts.set(due[0]!.organizationId, (firsts.get(due[0]!.organizationId) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    console.info(`100 claims of 1 served ${firsts.size} of 20 organizations with work, the most often ${Math.max(...firsts.values())} times`);
    expect([...firsts.keys()].every((id) => busy.includes(id))).toBe(true);
    expect(firsts.size).toBeGreaterThanOrEqual(15);
    await settleEverything();
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
