import { openPlatform, WebhookEndpointRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { createTestDatabase, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, settledDeliveries, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret } from "@platter/domain";

/**
 * What a delivery costs the database, counted by PostgreSQL itself (pg_stat_user_tables): at most
 * three row writes per delivery (the claim's update, the attempt's insert, the result's update),
 * with every attempt recorded. The messages and their deliveries are written beforehand by another
 * process's pool, closed before the count starts, so only the dispatcher's writes are counted.
 */

const DELIVERIES = 300;

let db: TestDatabase;
let target: Receiver;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  target = await startReceiver(() => ({ status: 200 }));
});

afterAll(async () => {
  await killLeftoverDispatchers();
  await target?.close();
  await db?.dispose();
});

interface TableWrites {
  relname: string;
  writes: number;
}

/** Row writes per table (a partitioned one's partitions together) since the database was made, as far as PostgreSQL has flushed its counters. */
const writesByTable = async () =>
  new Map(
    // A partitioned table's rows are counted in its partitions: summed to the table.
    (await sql<TableWrites>(db, `select coalesce(parent.relname, s.relname) as relname, sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::int as writes
      from pg_stat_user_tables s left join pg_inherits i on i.inhrelid = s.relid left join pg_class parent on parent.oid = i.inhparent
      group by 1`)).map(
      (row) => [row.relname, row.writes],
    ),
  );

describe("database work per delivery", () => {
  it(`is at most three row writes per delivery for a backlog of ${DELIVERIES}, every attempt recorded`, async () => {
    // The backlog, written through the API's own path by a pool that then closes (its counters flush as it goes).
    const platform = await openPlatform({ databaseUrl: db.url, dataDir: "", localPostgresPort: 0, secretKeys: TEST_SECRET_KEYS, poolSize: 4, ...TEST_DATABASE_LIMITS });
    const organizationId = await platform.runPromise(
      Effect.gen(function* () {
        const org = yield* Operator.use((o) => o.createOrganization({ name: "Counted Caterers", currency: "EUR" }));
        const scope = yield* Operator.use((o) => o.scopeOf(org.id));
        yield* WebhookEndpointRepository.use((r) => r.add(scope, target.url, [], generateSigningSecret()));
        for (let i = 0; i < DELIVERIES; i++) yield* Clients.create(apiKeyActor(scope), { name: `Client ${i}` });
        return org.id;
      }),
    );
    await platform.dispose();
    const before = await waitFor("the backlog's counters to be flushed", async () => {
      const writes = await writesByTable();
      return (writes.get("webhook_deliveries") ?? 0) >= DELIVERIES ? writes : undefined;
    }, 15_000);

    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_TIMEOUT: "5s", WEBHOOK_LEASE: "35s" });
    const deliveries = await settledDeliveries(db, organizationId, DELIVERIES, 60_000);
    expect((await dispatcher.terminate()).code).toBe(0);
    expect(deliveries.filter((d) => d.status !== "succeeded")).toEqual([]);
    expect(deliveries.every((d) => d.attempts.length === 1)).toBe(true);

    // The dispatcher's backends flush their counters as they close.
    const after = await waitFor("the dispatcher's counters to be flushed", async () => {
      const writes = await writesByTable();
      return (writes.get("webhook_attempts") ?? 0) - (before.get("webhook_attempts") ?? 0) >= DELIVERIES ? writes : undefined;
    }, 15_000);
    // Webhook tables only: a dispatcher also announces itself (process_instances), once a second, not per delivery.
    const delta = [...after]
      .map(([table, writes]) => [table, writes - (before.get(table) ?? 0)] as const)
      .filter(([table, n]) => n > 0 && table.startsWith("webhook_"));
    const total = delta.reduce((sum, [, n]) => sum + n, 0);
    console.info(`row writes per delivery: ${(total / DELIVERIES).toFixed(2)} (${delta.map(([t, n]) => `${t} ${n}`).join(", ")})`);
    expect(total / DELIVERIES).toBeLessThanOrEqual(3);
    expect(Object.fromEntries(delta)).toEqual({ webhook_deliveries: 2 * DELIVERIES, webhook_attempts: DELIVERIES });
  });
});
