import { randomBytes } from "node:crypto";
import type { MikroORM } from "@mikro-orm/postgresql";
import { Effect, ManagedRuntime } from "effect";
import pg from "pg";
import { endpointSecretContext, makeSecretCipher, parseSecretKeys, type SecretKey } from "@platter/domain";
import { Database, resealStoredSecrets, type SealedCounts } from "@platter/persistence/tooling";
import { type Persistence, persistenceLayer, type PlatformRuntime } from "@platter/persistence";

/** A fresh, migrated database of its own for one test file, so files run in parallel without sharing state. */
export interface TestDatabase {
  readonly url: string;
  /** Raw access for a test's own set-up and checks; the code under test goes through the storage services. */
  readonly orm: MikroORM;
  /** This database's storage services, as a process's platform (for an API or dispatcher under test). */
  readonly runtime: PlatformRuntime;
  /** Runs a program against this database's storage services. */
  readonly run: <A, E>(program: Effect.Effect<A, E, Persistence>) => Promise<A>;
  /**
   * A connected raw `pg` client of its own on this database (one per call; `dispose` ends any still
   * open): for what the storage services cannot do, such as the simple protocol, a held lock or a
   * transaction left open.
   */
  readonly rawClient: () => Promise<pg.Client>;
  /** Closes the pool and drops the database. */
  readonly dispose: () => Promise<void>;
}

/** Runs `use` with a raw `pg` client connected to `url`, ended afterwards whatever happens. */
export const withRawClient = async <A>(url: string, use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
};

const withAdmin = (adminUrl: string, statement: string): Promise<void> =>
  withRawClient(adminUrl, async (client) => void (await client.query(statement)));

/** No read replicas, as configuration reads it when nothing is set. */
export const NO_REPLICAS = { urls: [], maxLagMs: 1_000, timeoutMs: 1_000, readYourWritesMs: 5_000 } as const;

/** A server reached directly (no pooler) and no replicas, as configuration reads it when nothing is set. */
export const DIRECT_CONNECTION = { pooler: "none", preparedStatements: "named", listenUrl: undefined, replicas: NO_REPLICAS } as const;

/** Waits for tests: generous, since a loaded test machine is slow, but bounded. */
export const TEST_DATABASE_LIMITS = { connectTimeoutMs: 10_000, statementTimeoutMs: 60_000, startTimeoutMs: 30_000 } as const;

/**
 * The keyring tests seal stored secrets with, and its text as `SECRET_ENCRYPTION_KEYS` (which
 * vitest.shared.ts sets for every test process, so processes a test starts get it too).
 */
export const TEST_SECRET_KEYS_TEXT = "test:dGVzdC1zZWNyZXQta2V5LW9mLTMyLWJ5dGVzLSEhISE=";

/** `TEST_SECRET_KEYS_TEXT` parsed. */
export const TEST_SECRET_KEYS = parseSecretKeys(TEST_SECRET_KEYS_TEXT) as ReadonlyArray<SecretKey>;

/**
 * Seals the secrets a test (or a benchmark) wrote in clear straight into the tables, with the test
 * keyring, as a process's start does: for rows made past the stores (beyond the endpoint limit, in bulk).
 */
export const sealSecretsWrittenInClear = (db: Pick<TestDatabase, "orm">): Promise<SealedCounts> =>
  resealStoredSecrets(db.orm, makeSecretCipher(TEST_SECRET_KEYS));

/** What an endpoint's stored (sealed) secret column holds, opened with the test keyring; null stays null. */
export const openStoredEndpointSecret = (stored: string | null, organizationId: number | string, endpointId: number | string): string | null =>
  stored === null ? null : makeSecretCipher(TEST_SECRET_KEYS).open(stored, endpointSecretContext(organizationId, endpointId));

/** An empty database `t_<random>` on the test server (no migration applied): its URL, and how to drop it. */
export const createEmptyDatabase = async (adminUrl: string): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const name = `t_${randomBytes(6).toString("hex")}`;
  await withAdmin(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => withAdmin(adminUrl, `drop database if exists ${name} with (force)`) };
};

/** Creates database `t_<random>` on the test server and applies every migration. */
export const createTestDatabase = async (adminUrl: string): Promise<TestDatabase> => {
  const empty = await createEmptyDatabase(adminUrl);
  const url = new URL(empty.url);
  const runtime = ManagedRuntime.make(
    persistenceLayer({ url: url.toString(), dataDir: "", localPort: 0, poolSize: 5, migrate: true, secretKeys: TEST_SECRET_KEYS, ...TEST_DATABASE_LIMITS }),
  );
  const { orm } = await runtime.runPromise(Database.use(Effect.succeed));
  const rawClients = new Set<pg.Client>();
  return {
    url: url.toString(),
    orm,
    runtime,
    run: (program) => runtime.runPromise(program),
    rawClient: async () => {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      rawClients.add(client);
      client.once("end", () => rawClients.delete(client));
      return client;
    },
    dispose: async () => {
      await Promise.allSettled([...rawClients].map((client) => client.end()));
      await runtime.dispose();
      await empty.drop();
    },
  };
};
