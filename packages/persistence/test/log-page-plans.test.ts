import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AuditLog, type Database, DeliveryRepository, openPlatform, RequestLog, WebhookMessages } from "../src/index.ts";
import { Database as DatabaseService } from "../src/database.ts";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase, withRawClient } from "@platter/testing";

/**
 * The Developer area's three logs, and the message feed, read through `readKeysetPage` each page as one walk of their
 * organization's index in its order: PostgreSQL's generic plan of every page statement (first
 * page, next page, a time range, a filter), read off the connection's own `pg_prepared_statements`
 * on a pool of one, scans the log's index and sorts none of the log's rows. Two organizations of
 * 4,000 rows in each log, analyzed.
 */

const ROWS = 4_000;

let db: TestDatabase;
let a: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Plans A");
  const b = await createOrganization(db, "Plans B");
  const sql = (statement: string, params: unknown[]) => db.orm.em.getConnection().execute(statement, params);
  for (const org of [a, b]) {
    await db.run(Seeding.deliveryLog(org.scope, { deliveries: ROWS, endpoints: 2 }));
    await sql(
      `insert into api_requests (organization_id, api_key_id, at, method, route, status, duration_ms, request_id, error)
       select ?, ?, now() - g * interval '1 second', 'GET', '/v1/events', case when g % 10 = 0 then 500 else 200 end, 1, 'req_' || g, null
       from generate_series(1, ?) g`,
      [org.id, org.readKeyId, ROWS],
    );
    await sql(
      `insert into audit_log (organization_id, operator, action, subject, at)
       select ?, 'root', case when g % 3 = 0 then 'api_key.created' else 'webhook_endpoint.created' end, 'row ' || g, now() - g * interval '1 second'
       from generate_series(1, ?) g`,
      [org.id, ROWS],
    );
  }
  await sql("analyze", []);
}, 120_000);
afterAll(() => db?.dispose());

const FROM = "2020-01-01T00:00:00.000Z";
const TO = "2030-01-01T00:00:00.000Z";
const NEXT = { limit: 50, after: ["2026-11-27T00:00:00.000Z", 1_000_000_000] as const };
const FIRST = { limit: 50, after: undefined };

describe.each([
  {
    log: "delivery log",
    table: "webhook_deliveries d",
    // Partitioned by time (HistoryPartitions): each partition's copy of the log's indexes, partitions newest first (an ordered Append).
    index: /Index Scan Backward using webhook_deliveries_p\d+_(organization_id|endpoint_id)_created_at_id_idx\d* on webhook_deliveries_p\d+ d_\d+/,
    sorted: /Sort Key: d\.created_at/,
    pages: (endpointId: number) => DeliveryRepository.use((r) => Effect.all([
      r.log(a.scope, {}, FIRST), r.log(a.scope, {}, NEXT), r.log(a.scope, { from: FROM, to: TO }, NEXT),
      r.log(a.scope, { endpointId, status: "failed" }, NEXT), r.log(a.scope, { eventType: "invoice.paid", from: FROM }, FIRST),
    ])),
  },
  {
    log: "request log",
    table: "api_requests r",
    // Partitioned by time (REQUEST_HISTORY): each partition's copy of `(organization_id, at desc, id desc)`, partitions newest first (an ordered Append).
    index: /Index Scan using api_requests_p\d+_organization_id_at_id_idx\d* on api_requests_p\d+ r_\d+/,
    sorted: /Sort Key: r\.at/,
    pages: () => RequestLog.use((r) => Effect.all([
      // With every filter at once the generic plan (estimating each filter selective) collects the few rows and sorts
      // them, as before this reader; a single filter keeps the walk.
      r.list(a.scope, {}, FIRST), r.list(a.scope, {}, NEXT), r.list(a.scope, { from: FROM, to: TO }, NEXT), r.list(a.scope, { statusClass: "5xx" }, NEXT),
    ])),
  },
  {
    log: "audit log",
    table: "audit_log a",
    index: /Index Scan using audit_log_organization_idx on audit_log a/,
    sorted: /Sort Key: a\.at/,
    pages: () => AuditLog.use((r) => Effect.all([
      r.page(a.scope, {}, FIRST), r.page(a.scope, {}, NEXT), r.page(a.scope, { from: FROM, to: TO }, NEXT),
      r.page(a.scope, { action: "api_key.created", actor: "operator" }, NEXT),
    ])),
  },
  {
    log: "message feed",
    table: "webhook_messages m",
    index: /Index Scan using webhook_messages_p\d+_organization_id_created_at_id_idx on webhook_messages_p\d+ m_\d+/,
    sorted: /Sort Key: m\.created_at/,
    pages: () => WebhookMessages.use((r) => Effect.all([
      r.feed(a.scope, { eventTypes: [] }, FIRST), r.feed(a.scope, { eventTypes: [] }, NEXT), r.feed(a.scope, { eventTypes: [] }, { limit: 50, after: [FROM, 0] }),
      r.feed(a.scope, { eventTypes: ["invoice.paid", "client.created"] }, NEXT),
    ])),
  },
])("the $log", ({ table, index, sorted, pages }) => {
  it("walks its index in the log's order on every page statement, sorting none of its rows", async () => {
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS,
    });
    try {
      const statements = await platform.runPromise(Effect.gen(function* () {
        const database: Database["Service"] = yield* DatabaseService;
        const [endpoint] = yield* database.rows<{ id: string }>("select id from webhook_endpoints where organization_id = ? order by id limit 1", [a.id]);
        yield* pages(Number(endpoint!.id));
        const statements = yield* database.rows<{ statement: string }>(
          "select statement from pg_prepared_statements where statement like ? and statement like '%limit $%'", [`% from ${table} %`]);
        return statements.map((row) => row.statement);
      }));
      // The simple protocol: a statement with parameters and no values, which only `generic_plan` plans.
      const plans = await withRawClient(db.url, async (client) => {
        const explained: string[] = [];
        for (const statement of statements) {
          const plan = await client.query<{ "QUERY PLAN": string }>(`explain (generic_plan, costs off) ${statement}`);
          explained.push(plan.rows.map((line) => line["QUERY PLAN"]).join("\n"));
        }
        return explained;
      });
      expect(plans.length).toBeGreaterThanOrEqual(3);
      for (const plan of plans) {
        expect(plan).toMatch(index);
        expect(plan).not.toMatch(sorted);
      }
    } finally {
      await platform.dispose();
    }
  });
});
