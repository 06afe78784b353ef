import { DatabaseUnavailable, type OrgScope } from "@platter/domain";
import { Cause, Effect, Exit, ManagedRuntime } from "effect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inOneTransaction, OrganizationRepository, persistenceLayer, pingDatabase, type Persistence } from "../src/index.ts";
import { Operator } from "../src/operator.ts";
import {
  type ControlledPostgres, createOrganization, createTestDatabase, startControlledPostgres, TEST_SECRET_KEYS, type TestDatabase,
} from "@platter/testing";

/**
 * A database outage is a typed failure at the driver: every way a statement reaches PostgreSQL
 * (the pool's `Database.rows`, OrgSql's selects, the ORM's transaction runner and its inserts)
 * fails with the domain's `DatabaseUnavailable` in the error channel, not a defect whose message
 * someone must read, whether the server is stopped or frozen (SIGSTOP, as a hung machine).
 */

let postgres: ControlledPostgres;
let db: TestDatabase;
let scope: OrgScope;
let runtime: ManagedRuntime.ManagedRuntime<Persistence, never>;

beforeAll(async () => {
  postgres = await startControlledPostgres();
  db = await createTestDatabase(postgres.adminUrl);
  scope = (await createOrganization(db)).scope;
  // Short waits, so a frozen server is given up within seconds (the silence watchdog: statement timeout + 1 s).
  runtime = ManagedRuntime.make(persistenceLayer({
    url: db.url, dataDir: "", localPort: 0, poolSize: 2, migrate: false, secretKeys: TEST_SECRET_KEYS,
    connectTimeoutMs: 1_000, statementTimeoutMs: 1_000, startTimeoutMs: 5_000,
  }));
  await runtime.runPromise(pingDatabase);
});

afterAll(async () => {
  await postgres?.thaw().catch(() => {});
  await runtime?.dispose().catch(() => {});
  await db?.dispose().catch(() => {});
  await postgres?.dispose();
});

/** Every door from a program to PostgreSQL. */
const STATEMENTS: ReadonlyArray<readonly [string, () => Effect.Effect<unknown, unknown, Persistence>]> = [
  ["a statement on the pool (Database.rows)", () => pingDatabase],
  ["an OrgSql select", () => OrganizationRepository.use((organizations) => organizations.current(scope))],
  ["a transaction (the ORM's begin, statement, commit)", () => inOneTransaction(OrganizationRepository.use((organizations) => organizations.current(scope)))],
  ["an ORM insert", () => Operator.use((operator) => operator.createOrganization({ name: "Outage", currency: "EUR" }))],
];

/** What `program` ended with: its expected failure, or "defect" / "success". */
const endOf = async (program: Effect.Effect<unknown, unknown, Persistence>): Promise<unknown> => {
  const exit = await runtime.runPromiseExit(program);
  if (Exit.isSuccess(exit)) return "success";
  const failure = exit.cause.reasons.find(Cause.isFailReason);
  return failure === undefined ? "defect" : failure.error;
};

describe("a database outage is a typed failure at the driver", () => {
  it("the storage works before the outage", async () => {
    for (const [, program] of STATEMENTS) expect(await endOf(program())).toBe("success");
  });

  it.each(STATEMENTS)("stopped: %s fails with DatabaseUnavailable", async (_name, program) => {
    await postgres.stop("immediate");
    try {
      expect(await endOf(program())).toBeInstanceOf(DatabaseUnavailable);
    } finally {
      await postgres.start();
    }
  });

  it.each(STATEMENTS)("frozen: %s fails with DatabaseUnavailable", async (_name, program) => {
    await runtime.runPromise(pingDatabase); // a pooled connection to the server before it freezes
    await postgres.freeze();
    try {
      expect(await endOf(program())).toBeInstanceOf(DatabaseUnavailable);
    } finally {
      await postgres.thaw();
    }
  });
});
