import { generateSigningSecret } from "@platter/domain";
import type { DeliveryPolicy, HeldSlots } from "@platter/domain";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, type TestDatabase, withRawClient } from "@platter/testing";
import { CLAIM_NOTICES } from "../src/webhooks/operator-notices.ts";

/**
 * The operator channel shared by every organization, attacked by one: organization A's 40 endpoints
 * all fail, so A has 40 notices waiting, all older than organization B's one. A claim of the
 * channel's slots still takes B's notice in its first turn, A never gets past its share of the
 * slots (3 of 4), and while A holds its share, B's notice is the only thing claimed. However many
 * notices one organization has waiting (a burst of 1,500), another's is in the first claim: the claim
 * walks organizations on `endpoint_notices_operator_due_idx` and reads only what it may claim of each.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
let noticeOfB: number | undefined;
const channel = { url: "http://127.0.0.1:9/operator", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };
const policy: DeliveryPolicy = { circuitThreshold: 3, circuitCooldownMs: 0, retryScheduleMs: [0, 1000], failureWindowMs: 3_600_000, notifyOperator: true };

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** A notice for each endpoint of organization `id`, the first written `minutesAgo` minutes ago and each next one a second later. */
const noticesOf = async (id: number, minutesAgo: number) =>
  (await rows<{ id: string }>(
    `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, operator_next_attempt_at, created_at)
     select e.organization_id, e.id, 'failing', 'failing', e.url, 'pending',
       now() - ? * interval '1 minute' + row_number() over (order by e.id) * interval '1 second',
       now() - ? * interval '1 minute'
     from webhook_endpoints e where e.organization_id = ? order by e.id returning id`,
    [minutesAgo, minutesAgo, id],
  )).map((row) => Number(row.id));

/** Four slots, each organization at most three of them (as the dispatcher's operator loop shares `OPERATOR_WEBHOOK_CONCURRENCY` 4). */
const slots = (heldByA: number): HeldSlots => ({
  ...nothingHeld, organizationShare: 3, inFlightByOrganization: new Map(heldByA === 0 ? [] : [[a.id, heldByA]]),
});

const claim = (limit: number, held: HeldSlots) =>
  db.run(DeliveryQueue.use((queue) => queue.operatorNotices(channel).claimDue(limit, 60_000, policy, held)));

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Failing Everywhere");
  b = await createOrganization(db, "Quiet Neighbour");
  for (let i = 0; i < 40; i++) await db.run(WebhookEndpointRepository.use((r) => r.add(a.scope, `https://198.51.100.${i + 1}/hook`, [], generateSigningSecret())));
  await db.run(WebhookEndpointRepository.use((r) => r.add(b.scope, "https://203.0.113.9/hook", [], generateSigningSecret())));
  await noticesOf(a.id, 30);
  [noticeOfB] = await noticesOf(b.id, 1);
});
afterAll(() => db?.dispose());

describe("the operator channel, with one organization failing everywhere", () => {
  it("takes the other organization's notice in the first claim, and no more of A's than its share of the slots", async () => {
    const first = await claim(4, slots(0));
    const byOrganization = first.due.map((notice) => notice.organizationId);
    expect(byOrganization.filter((id) => id === b.id)).toHaveLength(1);
    expect(byOrganization.filter((id) => id === a.id)).toHaveLength(3);
    expect(first.due.find((notice) => notice.organizationId === b.id)?.id).toBe(noticeOfB);
  });

  it("claims nothing more of A's while A holds its share, however many it has waiting", async () => {
    await rows("update endpoint_notices set lease_token = null, lease_expires_at = null");
    const [waiting] = await rows<{ n: number }>("select count(*)::int as n from endpoint_notices where organization_id = ? and operator_status = 'pending'", [a.id]);
    expect(waiting!.n).toBe(40);
    const claimed = await claim(4, slots(3));
    expect(claimed.due.map((notice) => notice.organizationId)).toEqual([b.id]);
  });
});

describe("the operator channel, with one organization's burst of 1,500 notices", () => {
  it("takes the other organization's one notice in the first claim, behind 1,500 older ones", async () => {
    await rows("update endpoint_notices set operator_status = 'succeeded', lease_token = null, lease_expires_at = null");
    const burst = await createOrganization(db, "Bursting Notices");
    const quiet = await createOrganization(db, "One Notice");
    const [endpointOfBurst] = await rows<{ id: string }>(
      "insert into webhook_endpoints (organization_id, url, origin, secret, event_types) values (?, 'https://198.51.100.200/hook', 'https://198.51.100.200', 'whsec_x', '{}') returning id",
      [burst.id],
    );
    await rows(
      `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, operator_next_attempt_at, created_at)
       select ?, ?, 'failing', 'failing', 'https://198.51.100.200/hook', 'pending', now() - interval '1 hour' + g * interval '1 millisecond', now() - interval '1 hour'
       from generate_series(1, 1500) g`,
      [burst.id, endpointOfBurst!.id],
    );
    await db.run(WebhookEndpointRepository.use((r) => r.add(quiet.scope, "https://203.0.113.10/hook", [], generateSigningSecret())));
    const [noticeOfQuiet] = await noticesOf(quiet.id, 1);
    const first = await claim(4, { ...nothingHeld, organizationShare: 3 });
    expect(first.due.filter((notice) => notice.organizationId === quiet.id).map((notice) => notice.id)).toEqual([noticeOfQuiet]);
    expect(first.due.filter((notice) => notice.organizationId === burst.id)).toHaveLength(3);
  });

  it("reads notices through the organization index only, in proportion to what it claims, not to the 1,500 waiting (its generic plan)", async () => {
    await rows("update endpoint_notices set lease_token = null, lease_expires_at = null");
    await rows("analyze endpoint_notices");
    // As the dispatcher's pooled connection runs it after a few claims: a prepared statement's generic plan.
    const { scans, rowsRead } = await withRawClient(db.url, async (client) => {
      let n = 0;
      await client.query("set plan_cache_mode = force_generic_plan");
      await client.query(`prepare claim as ${CLAIM_NOTICES.replace(/\?/g, () => `$${++n}`)}`);
      await client.query("begin");
      const { rows: [plan] } = await client.query(`explain (analyze, buffers, format json) execute claim(4, 64, 60000, 3, '[]')`);
      await client.query("rollback");
      const found: string[] = [];
      let read = 0;
      const visit = (node: PlanNode) => {
        if (node["Relation Name"] === "endpoint_notices" && node["Node Type"] !== "ModifyTable") {
          found.push(node["Index Name"] ?? node["Node Type"]);
          read += node["Actual Rows"] * node["Actual Loops"];
        }
        for (const child of node.Plans ?? []) visit(child);
      };
      visit(plan["QUERY PLAN"][0].Plan);
      return { scans: found, rowsRead: read };
    });
    console.info(`notice rows read by a claim of 4 beside 1,500 waiting: ${rowsRead}`);
    expect(new Set(scans)).toEqual(new Set(["endpoint_notices_operator_due_idx", "endpoint_notices_pkey"]));
    expect(rowsRead).toBeLessThan(50);
  });
});

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly "Actual Rows": number;
  readonly "Actual Loops": number;
  readonly Plans?: ReadonlyArray<PlanNode>;
}
