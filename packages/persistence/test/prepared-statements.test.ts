import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, type Database, EventRepository, openPlatform } from "../src/index.ts";
import { Database as DatabaseService } from "../src/database.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, TEST_DATABASE_LIMITS, type TestDatabase } from "../src/testing/index.ts";

/**
 * Named prepared statements by default (each connection parses and plans a text once), none with
 * `preparedStatements: "unnamed"` (for a transaction pooler without support for them): read off
 * the connection's own `pg_prepared_statements`, on a pool of one.
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db);
});
afterAll(() => db?.dispose());

describe("prepared statements", () => {
  it.each([["named", true], ["unnamed", false]] as const)("%s: statements prepared on the connection: %s", async (preparedStatements, prepares) => {
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, ...TEST_DATABASE_LIMITS, preparedStatements,
    });
    try {
      const prepared = await platform.runPromise(Effect.gen(function* () {
        yield* ClientRepository.use((clients) => clients.list(org.scope, { limit: 5, after: undefined }));
        const database: Database["Service"] = yield* DatabaseService;
        const [row] = yield* database.rows<{ n: number }>("select count(*)::int as n from pg_prepared_statements");
        return row!.n;
      }));
      expect(prepared > 0).toBe(prepares);
    } finally {
      await platform.dispose();
    }
  });
});

/**
 * Generic plans (the API's pools): every named statement runs the plan PostgreSQL made once
 * without its values, and for a keyset page that plan walks the organization's index in its order
 * (no sort of the organization's rows), whatever the page size and cursor. Without the setting,
 * PostgreSQL plans such a page anew at each execution. Read off the connection's own
 * `pg_prepared_statements`, on a pool of one.
 */
const seedEvents = async (count: number) => {
  for (let i = 0; i < count; i++) await db.run(EventRepository.use((events) => events.create(org.scope, { name: `Event ${i}` })));
};

describe("generic plans", () => {
  const listTwice = Effect.gen(function* () {
    for (const limit of [5, 5, 50, 5, 100, 5, 20]) {
      const page = yield* EventRepository.use((events) => events.list(org.scope, { limit, after: undefined }));
      if (page.next_cursor !== null) yield* EventRepository.use((events) => events.list(org.scope, { limit, after: [page.data.at(-1)!.created_at, page.data.at(-1)!.id] }));
    }
    const database: Database["Service"] = yield* DatabaseService;
    const [setting] = yield* database.rows<{ mode: string }>("select current_setting('plan_cache_mode') as mode");
    const statements = yield* database.rows<{ name: string; generic_plans: string; custom_plans: string; parameter_types: string }>(
      "select name, generic_plans, custom_plans, parameter_types::text from pg_prepared_statements where statement like 'select e.id, %from events e where%'");
    const plans: string[] = [];
    for (const statement of statements) {
      // The organization first, then a limit, a timestamp or an id.
      const values = statement.parameter_types.replace(/[{}"]/g, "").split(",")
        .map((type, i) => (i === 0 ? String(org.scope.organizationId) : type.startsWith("timestamp") ? "now()" : "11")).join(", ");
      const lines = yield* database.rows<{ "QUERY PLAN": string }>(`explain execute ${statement.name}(${values})`);
      plans.push(lines.map((line) => line["QUERY PLAN"]).join("\n"));
    }
    return { mode: setting!.mode, statements, plans };
  });

  it("the API's setting: each events page statement runs its one generic plan, an index walk without a sort", async () => {
    await seedEvents(30);
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, ...TEST_DATABASE_LIMITS, genericPlans: true,
    });
    try {
      const { mode, statements, plans } = await platform.runPromise(listTwice);
      expect(mode).toBe("force_generic_plan");
      expect(statements).toHaveLength(2); // the first page and the next
      for (const statement of statements) {
        expect(Number(statement.custom_plans)).toBe(0);
        expect(Number(statement.generic_plans)).toBeGreaterThan(0);
      }
      for (const plan of plans) {
        expect(plan).toMatch(/Index (Only )?Scan/);
        expect(plan).not.toMatch(/Sort/);
      }
    } finally {
      await platform.dispose();
    }
  });

  it("by default (other processes): PostgreSQL's own choice", async () => {
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, ...TEST_DATABASE_LIMITS,
    });
    try {
      expect((await platform.runPromise(listTwice)).mode).toBe("auto");
    } finally {
      await platform.dispose();
    }
  });
});
