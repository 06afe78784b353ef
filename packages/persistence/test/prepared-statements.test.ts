import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ClientRepository, type Database, openPlatform } from "../src/index.ts";
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
