import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Seeding } from "@platter/seeds";
import {
  backdateHistory, createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase,
  testDeliveryPolicy, withRawClient,
} from "@platter/testing";
import { Effect } from "effect";
import { exampleMessage } from "@platter/domain";
import { type Database, DeliveryRepository, openPlatform, type Persistence, WebhookEndpointRepository } from "../src/index.ts";
import { coverPartitionSql, HistoryPartitions, WEBHOOK_HISTORY } from "../src/index.ts";
import { Database as DatabaseService } from "../src/database.ts";
import { isoTimestamp } from "../src/keyset-page.ts";
import { RECORD } from "../src/webhooks/attempt-record.ts";
import { claimStatement, NEXT_DUE, nextDueValues } from "../src/webhooks/delivery-claim.ts";
import { ENDPOINT_STATS, QUEUE_DEPTH } from "../src/webhooks/queue-metrics.ts";
import { envelopeIdTime, recordTestMessage } from "../src/repositories/webhook-message.ts";
import { orgSql } from "../src/org-sql.ts";

/**
 * The dispatcher's statements on history partitioned by time at about the default retention's number of
 * partitions (a day each, about 40): a claim and a batch of results read only the partitions of the deliveries
 * they name (run-time pruning on the partition key they carry), never an Append of every partition, and a log page after
 * a cursor reads no partition newer than it. 8,000
 * deliveries spread over a few weeks' partitions, some pending and due, analyzed.
 */

let db: TestDatabase;
let org: OrganizationFixture;
const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Partitions");
  await db.run(Seeding.deliveryLog(org.scope, { deliveries: 8_000, endpoints: 2 }));
  await withRawClient(db.url, (client) => client.query(coverPartitionSql(WEBHOOK_HISTORY, new Date(Date.now() - 31 * 86_400_000), 86_400_000)));
  await backdateHistory(db.url, "m.organization_id = $1 and m.id % 4 = 1", [org.id], "m.created_at - interval '3 days'");
  await backdateHistory(db.url, "m.organization_id = $1 and m.id % 4 = 2", [org.id], "m.created_at - interval '10 days'");
  // A few due deliveries in every partition with rows.
  await rows("update webhook_deliveries set status = 'pending', next_attempt_at = now() - interval '1 hour', attempts = 1 where id % 97 = 0");
  await rows("analyze");
}, 300_000);
afterAll(() => db?.dispose());

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly "Index Name"?: string;
  readonly "Subplan Name"?: string;
  readonly "Actual Loops": number;
  readonly Plans?: ReadonlyArray<PlanNode>;
}

/** `statement`'s plan as it ran (EXPLAIN ANALYZE, in a transaction rolled back), and the rows it returned when run (also rolled back). */
const ranPlan = (statement: string, values: ReadonlyArray<unknown>) => withRawClient(db.url, async (client) => {
  let n = 0;
  const text = statement.replace(/\?/g, () => `$${++n}`);
  await client.query("begin");
  try {
    const { rows: returned } = await client.query<{ id: string }>(text, [...values]);
    await client.query("rollback");
    await client.query("begin");
    const { rows: [explained] } = await client.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(
      `explain (analyze, buffers, format json) ${text}`, [...values]);
    return { plan: explained!["QUERY PLAN"][0]!.Plan, returned };
  } finally {
    await client.query("rollback");
  }
});

/** The node of `plan` for the CTE or subplan `name`. */
const subplan = (plan: PlanNode, name: string): PlanNode | undefined =>
  plan["Subplan Name"] === name ? plan : (plan.Plans ?? []).map((child) => subplan(child, name)).find((found) => found !== undefined);

/** The partitions of `table` `plan` read (a scan node that ran), leaving out its CTEs and subplans (`Subplan Name`). */
const partitionsRead = (plan: PlanNode, table = "webhook_deliveries"): string[] => {
  const read = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node["Relation Name"]?.startsWith(`${table}_p`) && node["Node Type"].includes("Scan") && node["Actual Loops"] > 0) read.add(node["Relation Name"]);
    for (const child of node.Plans ?? []) if (child["Subplan Name"] === undefined) walk(child);
  };
  walk(plan);
  return [...read].sort();
};

/** The partitions of `table` any node of `plan` read, its CTEs and subplans too. */
const partitionsReadAnywhere = (plan: PlanNode, table = "webhook_deliveries"): string[] => {
  const read = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node["Relation Name"]?.startsWith(`${table}_p`) && node["Node Type"].includes("Scan") && node["Actual Loops"] > 0) read.add(node["Relation Name"]);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return [...read].sort();
};

/** The partitions of `table` made ahead: their lower bound later than now. */
const partitionsAhead = async (table = "webhook_deliveries"): Promise<string[]> =>
  (await rows<{ name: string }>(
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = ?::regclass
       and (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz > now() order by 1`, [table],
  )).map((row) => row.name);

/** The partitions holding the deliveries `ids`. */
const partitionsOf = async (ids: ReadonlyArray<string>): Promise<string[]> =>
  (await rows<{ partition: string }>(
    "select distinct tableoid::regclass::text as partition from webhook_deliveries where id = any(?::bigint[]) order by 1", [`{${ids.join(",")}}`],
  )).map((row) => row.partition);

it("has about the default retention's partitions", async () => {
  const [count] = await rows<{ n: number }>("select count(*)::int as n from pg_inherits where inhparent = 'webhook_deliveries'::regclass");
  expect(count!.n).toBeGreaterThanOrEqual(38);
});

describe("recording a batch of results", () => {
  it("moves each delivery reading only its partition", async () => {
    const due = await rows<{ id: string; endpoint_id: string; created_at: string }>(
      `select d.id, d.endpoint_id, d.created_at from webhook_deliveries d
       where d.status = 'pending' and d.tableoid = (select tableoid from webhook_deliveries where status = 'pending' order by created_at desc limit 1)
       limit 10`);
    expect(due.length).toBeGreaterThan(1);
    const results = due.map((d) => ({
      delivery_id: d.id, organization_id: org.id, endpoint_id: d.endpoint_id, lease_token: "00000000-0000-4000-8000-000000000000", attempt: 2,
      started_ms_ago: 10, duration_ms: 5, status_code: 200, error: null, response_body: null, outcome: "succeeded", retry_delay_ms: null,
      delivery_created_at: new Date(d.created_at).toISOString(),
    }));
    const { plan } = await ranPlan(RECORD, [JSON.stringify(results), 5, 30_000, 86_400_000, 3_600_000, false]);
    const [partition] = await partitionsOf(due.map((d) => d.id));
    expect(partitionsRead(subplan(plan, "CTE moved_deliveries")!)).toEqual([partition]);
    expect(partitionsRead(subplan(plan, "CTE recorded_attempts")!)).toEqual([partition]);
  });
});
describe("a claim", () => {
  it("leases what it picked reading only the picked deliveries' partitions", async () => {
    const claim = claimStatement(10, 60_000, testDeliveryPolicy, nothingHeld);
    const { plan, returned } = await ranPlan(claim.text, claim.values);
    expect(returned.length).toBe(10);
    const pending = await rows<{ n: number }>(
      "select count(distinct tableoid)::int as n from webhook_deliveries where status = 'pending'");
    const picked = await partitionsOf(returned.map((row) => row.id));
    // The claim's own update (its CTEs left out): the partitions from the oldest picked delivery's to the newest's, not every one.
    expect(picked.length).toBeLessThan(pending[0]!.n);
    const read = partitionsRead(plan);
    expect(read).toEqual(expect.arrayContaining(picked));
    expect(read.filter((partition) => partition < picked[0]! || partition > picked.at(-1)!)).toEqual([]);
  });
});

describe("a claim's and the idle dispatcher's searches of the due index", () => {
  it("read no partition made ahead of now (nothing is created in the future)", async () => {
    const ahead = await partitionsAhead();
    expect(ahead.length).toBeGreaterThanOrEqual(7);
    const claim = claimStatement(10, 60_000, testDeliveryPolicy, nothingHeld);
    const { plan, returned } = await ranPlan(claim.text, claim.values);
    expect(returned.length).toBe(10);
    const read = partitionsReadAnywhere(plan);
    expect(read.length).toBeGreaterThan(0);
    expect(read.filter((partition) => ahead.includes(partition))).toEqual([]);
    const nextDue = await ranPlan(NEXT_DUE, nextDueValues(testDeliveryPolicy));
    expect(nextDue.returned.length).toBe(1);
    expect(partitionsReadAnywhere(nextDue.plan).filter((partition) => ahead.includes(partition))).toEqual([]);
  });
});

describe("the queue's metrics (the dispatcher's gauges)", () => {
  it("count the pending deliveries reading no partition made ahead of now", async () => {
    const ahead = await partitionsAhead();
    expect(ahead.length).toBeGreaterThanOrEqual(7);
    const [pending] = await rows<{ n: number }>("select count(*)::int as n from webhook_deliveries where status = 'pending' and not via_listener");
    const depth = await ranPlan(QUEUE_DEPTH, []);
    expect(depth.returned).toEqual([{ n: String(pending!.n) }]);
    const stats = await ranPlan(ENDPOINT_STATS, []);
    expect(stats.returned.length).toBeGreaterThan(0);
    for (const { plan } of [depth, stats]) {
      const read = partitionsReadAnywhere(plan);
      expect(read.length).toBeGreaterThan(0);
      expect(read.filter((partition) => ahead.includes(partition))).toEqual([]);
    }
  });
});

/** The statement `read` sends on `from` (webhook_deliveries by default; its text also `like`), from its connection's prepared statements (a pool of one). */
const sentStatement = async (read: Effect.Effect<unknown, unknown, Persistence>, like: string, from = "webhook_deliveries d"): Promise<string> => {
  const platform = await openPlatform({
    databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS,
  });
  return platform.runPromise(Effect.gen(function* () {
    const database: Database["Service"] = yield* DatabaseService;
    yield* Effect.ignore(read);
    const [found] = yield* database.rows<{ statement: string }>(
      "select statement from pg_prepared_statements where statement like ? and statement like ?", [`% from ${from} %`, like]);
    return found!.statement;
  })).finally(() => platform.dispose());
};

describe("a page of the delivery log after a cursor", () => {
  it("reads no partition of deliveries newer than its cursor", async () => {
    const [cursor] = await rows<{ id: string; created_at: string }>(
      `select d.id, ${isoTimestamp("d.created_at")} as created_at from webhook_deliveries d
       where d.organization_id = ? order by d.created_at, d.id offset 4000 limit 1`, [org.id]);
    const after = [cursor!.created_at, Number(cursor!.id)] as const;
    const statement = await sentStatement(DeliveryRepository.use((r) => r.log(org.scope, {}, { limit: 50, after })), "%limit $%");
    // Its parameters: the cursor's time and id, the limit, the organization's id.
    const values = [...statement.matchAll(/(limit )?\$(\d+)(::\w+)?/g)]
      .map((m) => m[1] !== undefined ? 51 : m[3] === "::timestamptz" ? after[0] : m[3] === "::bigint" ? after[1] : org.id);
    const { plan, returned } = await ranPlan(statement.replace(/\$\d+/g, "?"), values);
    expect(returned.length).toBe(51);
    const [own] = await partitionsOf([cursor!.id]);
    expect(partitionsRead(plan).filter((partition) => partition > own!)).toEqual([]);
  });
});

/** `statement`'s values by position: the organization's id after `organization_id = `, else `id`. */
const byIdValues = (statement: string, id: string): string[] =>
  [...statement.matchAll(/(organization_id = )?\$\d+/g)].map((match) => match[1] !== undefined ? String(org.id) : id);

/**
 * Marks as the sweeps would have written them at each partition's lower bound over the fixture's history (its ids
 * drawn in time order, some rows backdated since): the greatest id below every id of the rows at or after the bound.
 */
const markTheFixture = () => rows(
  `insert into history_id_marks (table_name, partition_from, last_id)
   select t.name, p.lower, coalesce((select min(x.id) from webhook_deliveries x where t.name = 'webhook_deliveries' and x.created_at >= p.lower),
       (select min(x.id) from webhook_messages x where t.name = 'webhook_messages' and x.created_at >= p.lower), 1) - 1
   from (values ('webhook_deliveries'), ('webhook_messages')) t(name)
   cross join (select distinct (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as lower
     from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_deliveries'::regclass) p
   where p.lower <= now()
   on conflict (table_name, partition_from) do nothing`);

describe("one delivery by id (a detail page, a replay)", () => {
  it("reads its message in the delivery's partition only", async () => {
    const [delivery] = await rows<{ id: string }>("select id from webhook_deliveries where organization_id = ? order by id limit 1 offset 3000", [org.id]);
    const statement = await sentStatement(DeliveryRepository.use((r) => r.find(org.scope, Number(delivery!.id))), "%d.id = $%");
    const { plan, returned } = await ranPlan(statement.replace(/\$\d+/g, "?"), byIdValues(statement, delivery!.id));
    expect(returned.map((row) => row.id)).toEqual([delivery!.id]);
    const [own] = await partitionsOf([delivery!.id]);
    expect(partitionsRead(plan, "webhook_messages")).toEqual([own!.replace("webhook_deliveries", "webhook_messages")]);
  });

  it("reads one partition of deliveries: its time bounded by its id's mark, or by the clock for a new one", async () => {
    // One made now, and marked as the sweep does (`makeAhead`), and an older one of the fixture (not backdated).
    const [made] = await rows<{ id: string }>(
      `with m as (insert into webhook_messages (organization_id, type, payload) values (?, 'client.created', '{}') returning id, created_at)
       insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, next_attempt_at, created_at)
       select ?, (select id from webhook_endpoints where organization_id = ? limit 1), m.id, 'succeeded', m.created_at, m.created_at from m
       returning id`, [org.id, org.id, org.id]);
    await markTheFixture();
    const [older] = await rows<{ id: string }>(
      "select d.id from webhook_deliveries d where d.organization_id = ? and d.message_id % 4 in (0, 3) order by d.id limit 1 offset 2000", [org.id]);
    for (const delivery of [made!, older!]) {
      const statement = await sentStatement(DeliveryRepository.use((r) => r.find(org.scope, Number(delivery.id))), "%d.id = $%");
      const { plan, returned } = await ranPlan(statement.replace(/\$\d+/g, "?"), byIdValues(statement, delivery.id));
      expect(returned.map((row) => row.id)).toEqual([delivery.id]);
      expect(partitionsReadAnywhere(plan)).toEqual(await partitionsOf([delivery.id]));
    }
  });

  it("finds a row at a partition's first and at its last instant, reading that partition only", async () => {
    await markTheFixture();
    // The partition of an older delivery (not backdated): its first and last such rows moved to its first and last instants.
    const [older] = await rows<{ id: string }>(
      "select d.id from webhook_deliveries d where d.organization_id = ? and d.message_id % 4 in (0, 3) order by d.id limit 1 offset 2000", [org.id]);
    const [own] = await partitionsOf([older!.id]);
    const [bounds] = await rows<{ lower: string; upper: string }>(
      `select (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as lower,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as upper
       from pg_class c where c.relname = ?`, [own]);
    const [ends] = await rows<{ first: string; last: string }>(
      `select min(d.message_id) as first, max(d.message_id) as last from ${own} d where d.organization_id = ? and d.message_id % 4 in (0, 3)`, [org.id]);
    await backdateHistory(db.url, "m.id = $1", [ends!.first], `'${new Date(bounds!.lower).toISOString()}'::timestamptz`);
    await backdateHistory(db.url, "m.id = $1", [ends!.last], `'${new Date(bounds!.upper).toISOString()}'::timestamptz - interval '1 millisecond'`);
    const edge = await rows<{ id: string; message_id: string; created_at: string }>(
      `select d.id, d.message_id, d.created_at from webhook_deliveries d where d.message_id = any(?::bigint[]) order by d.created_at, d.id`,
      [`{${ends!.first},${ends!.last}}`]);
    expect(edge.map((row) => new Date(row.created_at).getTime())).toEqual(expect.arrayContaining([
      new Date(bounds!.lower).getTime(), new Date(bounds!.upper).getTime() - 1]));
    for (const row of edge) {
      const statement = await sentStatement(DeliveryRepository.use((r) => r.find(org.scope, Number(row.id))), "%d.id = $%");
      const { plan, returned } = await ranPlan(statement.replace(/\$\d+/g, "?"), byIdValues(statement, row.id));
      expect(returned.map((found) => found.id)).toEqual([row.id]);
      expect(partitionsReadAnywhere(plan)).toEqual([own]);
      const found = await db.run(DeliveryRepository.use((r) => r.find(org.scope, Number(row.id))));
      expect({ id: found.id, created_at: found.created_at }).toEqual({ id: Number(row.id), created_at: new Date(row.created_at).toISOString() });
    }
    // Replays find them too: each message's (both its deliveries failed), then each delivery (already due again: nothing more).
    await rows("update webhook_deliveries set status = 'failed', next_attempt_at = created_at where message_id = any(?::bigint[])", [`{${ends!.first},${ends!.last}}`]);
    for (const message of [ends!.first, ends!.last]) {
      expect(await db.run(DeliveryRepository.use((r) => r.retryMessage(org.scope, Number(message))))).toEqual({ retried: edge.filter((row) => row.message_id === message).length });
    }
    for (const row of edge) expect(await db.run(DeliveryRepository.use((r) => r.retry(org.scope, Number(row.id))))).toEqual({ retried: 0 });
  });

  it("finds a row whose id is newer than every mark (made long before its id was drawn): reading the partitions down to it", async () => {
    const [partition] = await rows<{ lower: string; upper: string }>(
      `select p.lower, p.upper from (select (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as lower,
           (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as upper
         from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'webhook_deliveries'::regclass) p
       where p.upper < now() - interval '15 days' order by p.lower desc limit 1`);
    const edge = await rows<{ id: string; message_id: string; created_at: string }>(
      `with m as (insert into webhook_messages (organization_id, type, payload, created_at)
         values (?, 'client.created', '{}', ?::timestamptz), (?, 'client.created', '{}', ?::timestamptz - interval '1 millisecond') returning id, created_at)
       insert into webhook_deliveries (organization_id, endpoint_id, message_id, status, next_attempt_at, created_at)
       select ?, (select id from webhook_endpoints where organization_id = ? limit 1), m.id, 'failed', m.created_at, m.created_at from m
       returning id, message_id, created_at`,
      [org.id, partition!.lower, org.id, partition!.upper, org.id, org.id]);
    for (const row of edge) {
      const found = await db.run(DeliveryRepository.use((r) => r.find(org.scope, Number(row.id))));
      expect({ id: found.id, created_at: found.created_at }).toEqual({ id: Number(row.id), created_at: new Date(row.created_at).toISOString() });
      expect(await db.run(DeliveryRepository.use((r) => r.retryMessage(org.scope, Number(row.message_id))))).toEqual({ retried: 1 });
    }
  });
});

/** `statement`'s values by position, each the value `byColumn` gives the column it is compared with (`d.created_at <= $3`). */
const valuesByColumn = (statement: string, byColumn: Record<string, unknown>): unknown[] =>
  [...statement.matchAll(/(\w+) (?:=|<=) \$\d+/g)].map((match) => {
    if (!(match[1]! in byColumn)) throw new Error(`no value for ${match[1]} in ${statement}`);
    return byColumn[match[1]!];
  });

describe("a test event's delivery (sendTestMessage)", () => {
  it("is found after its write reading the partition of its transaction's time only", async () => {
    const [endpoint] = await rows<{ id: string }>(
      "select id from webhook_endpoints where organization_id = ? and enabled and deleted_at is null order by id limit 1", [org.id]);
    const send = WebhookEndpointRepository.use((r) => r.sendTestMessage(org.scope, Number(endpoint!.id), exampleMessage("event.created")));
    // Its statement's text, as a pool's connection prepares it (a transaction's are not kept by name): `recordTestMessage` outside one.
    const statement = await sentStatement(
      Effect.flatMap(DatabaseService, (database) => recordTestMessage(orgSql(database, org.scope), exampleMessage("event.created"), Number(endpoint!.id))),
      "%d.message_id = $%");
    const { delivery_id } = await db.run(send);
    const [sent] = await rows<{ id: string; message_id: string }>(
      "select d.id, d.message_id from webhook_deliveries d where d.organization_id = ? and d.endpoint_id = ? order by d.created_at desc, d.id desc limit 1",
      [org.id, endpoint!.id]);
    expect(String(delivery_id)).toBe(sent!.id);
    // Run again later (its transaction's time is gone): the plan reads the partition of now, the delivery's, and no other.
    const { plan } = await ranPlan(statement.replace(/\$\d+/g, "?"),
      valuesByColumn(statement, { organization_id: org.id, message_id: sent!.message_id, endpoint_id: endpoint!.id }));
    expect(partitionsReadAnywhere(plan)).toEqual(await partitionsOf([sent!.id]));
  });
});

describe("a message by its envelope id (the Developer area's message page)", () => {
  it("reads the partition of the time its id carries, and still finds one moved back since or one whose id carries no time", async () => {
    const [endpoint] = await rows<{ id: string }>(
      "select id from webhook_endpoints where organization_id = ? and enabled and deleted_at is null order by id limit 1", [org.id]);
    const { delivery_id } = await db.run(WebhookEndpointRepository.use((r) => r.sendTestMessage(org.scope, Number(endpoint!.id), exampleMessage("invoice.paid"))));
    const [written] = await rows<{ id: string; envelope_id: string; created_at: string; partition: string }>(
      `select m.id, m.envelope_id, ${isoTimestamp("m.created_at")} as created_at, m.tableoid::regclass::text as partition
       from webhook_messages m join webhook_deliveries d on d.message_id = m.id and d.created_at = m.created_at where d.id = ?`, [delivery_id]);
    // `evt_` and 32 hex digits as before, now a UUIDv7's layout carrying the message's time.
    expect(written!.envelope_id).toMatch(/^evt_[0-9a-f]{12}7[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(envelopeIdTime(written!.envelope_id)).toBe(written!.created_at);

    const read = DeliveryRepository.use((r) => r.message(org.scope, written!.envelope_id));
    const statement = await sentStatement(read, "%m.envelope_id = $%", "webhook_messages m");
    const { plan, returned } = await ranPlan(statement.replace(/\$\d+/g, "?"),
      valuesByColumn(statement, { organization_id: org.id, envelope_id: written!.envelope_id, created_at: written!.created_at }));
    expect(returned.map((row) => row.id)).toEqual([written!.id]);
    expect(partitionsReadAnywhere(plan, "webhook_messages")).toEqual([written!.partition]);
    const found = await db.run(read);
    expect({ id: found.id, created_at: found.created_at, deliveries: found.deliveries.map((d) => d.id) })
      .toEqual({ id: Number(written!.id), created_at: written!.created_at, deliveries: [delivery_id] });

    // Moved back three days (its id's time unchanged): found, reading the partitions down to it.
    await backdateHistory(db.url, "m.id = $1", [written!.id], "m.created_at - interval '72 hours'");
    const moved = await db.run(read);
    expect({ id: moved.id, created_at: moved.created_at, deliveries: moved.deliveries.map((d) => d.id) })
      .toEqual({ id: Number(written!.id), created_at: new Date(Date.parse(written!.created_at) - 3 * 86_400_000).toISOString(), deliveries: [delivery_id] });

    // A random id (made before ids carried their time; the fixture's seeds still make them): found among every partition made by now.
    const [random] = await rows<{ id: string; envelope_id: string }>(
      "select m.id, m.envelope_id from webhook_messages m where m.organization_id = ? and m.id % 4 = 2 order by m.id limit 1", [org.id]);
    expect(envelopeIdTime(random!.envelope_id)).toBeUndefined();
    expect((await db.run(DeliveryRepository.use((r) => r.message(org.scope, random!.envelope_id)))).id).toBe(Number(random!.id));
  });

  it.each([
    ["a time before every partition", "evt_00000000000070008000000000000000"],
    ["a time past year 9999 (read as no time)", "evt_ffffffffffff7fffbfffffffffffffff"],
    ["a time of now but no such message", () => `evt_${Date.now().toString(16).padStart(12, "0")}7abc8def0123456789ab`],
    ["no time (random)", "evt_5c1b6e0b2f8e4f0fa3c1d2e3f4a5b6c7"],
  ])("answers NotFound for an id of %s", async (_case, id) => {
    await expect(db.run(DeliveryRepository.use((r) => r.message(org.scope, typeof id === "string" ? id : id()))))
      .rejects.toMatchObject({ _tag: "NotFound" });
  });
});

describe("marking ids", () => {
  it("marks the nearest partition ahead with each table's last id (makeAhead)", async () => {
    await db.run(HistoryPartitions.use((h) => h.makeAhead(WEBHOOK_HISTORY, 86_400_000, 8 * 86_400_000)));
    const marks = await rows<{ table_name: string; last_id: string; newest: string; ahead: boolean }>(
      `select k.table_name, k.last_id, (select max(id) from webhook_deliveries) as newest, k.partition_from > now() as ahead
       from history_id_marks k where k.table_name = 'webhook_deliveries' order by k.partition_from desc limit 1`);
    expect(marks[0]!.ahead).toBe(true);
    expect(Number(marks[0]!.last_id)).toBeGreaterThanOrEqual(Number(marks[0]!.newest));
  });

  it("forgets a partition's mark when retention drops the partitions before it", async () => {
    await markTheFixture();
    const old = "select count(*)::int as n from history_id_marks where partition_from < now() - interval '25 days'";
    expect((await rows<{ n: number }>(old))[0]!.n).toBeGreaterThan(0);
    expect(await db.run(HistoryPartitions.use((h) => h.dropExpired(WEBHOOK_HISTORY, 25 * 86_400_000)))).toBeGreaterThan(0);
    expect((await rows<{ n: number }>(old))[0]!.n).toBe(0);
  });
});

describe("a delivery's attempts", () => {
  // Each recorded attempt writes an entry in every index of webhook_attempts: the primary key leads with the delivery,
  // so it is the index a delivery's attempts are read by, and no second one is written (Migration20261204040000AttemptKeyLeadsWithDelivery).
  it("reads its attempts by the attempts' primary key, in the delivery's partition only, the key being one of two indexes written per attempt", async () => {
    const [delivery] = await rows<{ id: string }>(
      "select d.id from webhook_deliveries d where d.organization_id = ? and exists (select 1 from webhook_attempts a where a.delivery_id = d.id) order by d.id limit 1 offset 1000",
      [org.id],
    );
    const statement = await sentStatement(DeliveryRepository.use((r) => r.find(org.scope, Number(delivery!.id))), "%d.id = $%");
    const { plan } = await ranPlan(statement.replace(/\$\d+/g, "?"), byIdValues(statement, delivery!.id));
    const [own] = await partitionsOf([delivery!.id]);
    const attemptScans: string[] = [];
    const walk = (node: PlanNode) => {
      if (node["Relation Name"]?.startsWith("webhook_attempts_p") && node["Actual Loops"] > 0) {
        attemptScans.push(`${node["Node Type"]} ${node["Relation Name"]} ${node["Index Name"]}`);
      }
      for (const child of node.Plans ?? []) walk(child);
    };
    walk(plan);
    const partition = own!.replace("webhook_deliveries", "webhook_attempts");
    expect(attemptScans).toEqual([`Index Scan ${partition} ${partition}_pkey`]);
    const indexes = await rows<{ definition: string }>(
      "select replace(pg_get_indexdef(indexrelid), ' ON ONLY ', ' ON ') as definition from pg_index where indrelid = 'webhook_attempts'::regclass order by 1",
    );
    expect(indexes.map((index) => index.definition)).toEqual([
      "CREATE INDEX webhook_attempts_health_idx ON public.webhook_attempts USING btree (organization_id, started_at)",
      "CREATE UNIQUE INDEX webhook_attempts_pkey ON public.webhook_attempts USING btree (delivery_id, id, delivery_created_at)",
    ]);
  });
});
