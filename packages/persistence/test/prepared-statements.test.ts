import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, type Database, EventRepository, InvoiceRepository, openPlatform, RecipeRepository } from "../src/index.ts";
import { Database as DatabaseService } from "../src/database.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase } from "@platter/testing";
import { createEvent } from "./created-records.ts";

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
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS, preparedStatements,
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
 * without its values, and for each v1 list, first page and next, that plan walks the
 * organization's index in its order (no sort of the organization's rows). Without the setting,
 * PostgreSQL plans such a page anew at each execution. Read off the connection's own
 * `pg_prepared_statements` and `explain execute`, on a pool of one.
 */
const LIST_TABLES = ["events", "clients", "recipes", "invoices"] as const;

const seedEvents = async (count: number) => {
  for (let i = 0; i < count; i++) await db.run(createEvent(org.scope, { name: `Event ${i}` }));
};

describe("generic plans", () => {
  const listPages = Effect.gen(function* () {
    const byTime = { limit: 5, after: ["2026-01-01T00:00:00.000Z", 1_000_000] as const };
    const byName = { limit: 5, after: ["m", 1_000_000] as const };
    for (const limit of [5, 5, 50, 5, 100, 5, 20]) {
      const first = { limit, after: undefined };
      yield* EventRepository.use((r) => Effect.andThen(r.list(org.scope, first), r.list(org.scope, byTime)));
      yield* ClientRepository.use((r) => Effect.andThen(r.list(org.scope, first), r.list(org.scope, byName)));
      yield* RecipeRepository.use((r) => Effect.andThen(r.list(org.scope, first), r.list(org.scope, byName)));
      yield* InvoiceRepository.use((r) => Effect.andThen(r.list(org.scope, first), r.list(org.scope, byTime)));
    }
    const database: Database["Service"] = yield* DatabaseService;
    const [setting] = yield* database.rows<{ mode: string }>("select current_setting('plan_cache_mode') as mode");
    const statements = yield* database.rows<{ name: string; generic_plans: string; custom_plans: string; parameter_types: string; statement: string }>(
      "select name, generic_plans, custom_plans, parameter_types::text, statement from pg_prepared_statements where statement like 'select %limit $%' and statement not like '%pg_prepared_statements%'");
    const plans: string[] = [];
    for (const statement of statements) {
      // The organization first, then timestamps, names, ids and the limit.
      const values = statement.parameter_types.replace(/[{}"]/g, "").split(",")
        .map((type, i) => (i === 0 ? String(org.scope.organizationId) : type.startsWith("timestamp") ? "now()" : type === "text" ? "'m'" : "11"))
        .join(", ");
      const lines = yield* database.rows<{ "QUERY PLAN": string }>(`explain execute ${statement.name}(${values})`);
      plans.push(lines.map((line) => line["QUERY PLAN"]).join("\n"));
    }
    return { mode: setting!.mode, statements, plans };
  });

  it("the API's setting: each list's page statements run their one generic plan, an index walk without a sort", async () => {
    await seedEvents(30);
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS, genericPlans: true,
    });
    try {
      const { mode, statements, plans } = await platform.runPromise(listPages);
      expect(mode).toBe("force_generic_plan");
      // Each list's first page and next page.
      for (const table of LIST_TABLES) {
        expect(statements.filter((s) => s.statement.includes(` from ${table} `)), table).toHaveLength(2);
      }
      for (const statement of statements) {
        expect(Number(statement.custom_plans)).toBe(0);
        expect(Number(statement.generic_plans)).toBeGreaterThan(0);
      }
      for (const plan of plans) {
        expect(plan).toMatch(/Index (Only )?Scan/);
        // An invoice's line items are sorted in its subquery (`l.`); no sort of the listed rows (e, c, r, i).
        expect(plan).not.toMatch(/Sort Key: [ecri]\./);
      }
    } finally {
      await platform.dispose();
    }
  });

  it("by default (other processes): PostgreSQL's own choice", async () => {
    const platform = await openPlatform({
      databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 1, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS,
    });
    try {
      expect((await platform.runPromise(listPages)).mode).toBe("auto");
    } finally {
      await platform.dispose();
    }
  });
});
