import { mkdtemp } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importEmbeddedPostgres } from "@platter/postgres";

/**
 * Test PostgreSQL: one server per test run, chosen in this order: `TEST_DATABASE_URL` (an admin
 * URL of a server you run), a Testcontainers PostgreSQL when a container runtime answers, else an
 * embedded PostgreSQL from npm. Test files then create their own databases on it.
 */

export interface TestPostgres {
  /** URL of a role allowed to create databases. */
  readonly adminUrl: string;
  readonly kind: "external" | "container" | "embedded";
  readonly stop: () => Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now (for servers a test starts). */
export const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address !== null ? address.port : 0));
    });
  });

const containerRuntimeAvailable = async (): Promise<boolean> => {
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false; // "Could not find a working container runtime strategy": no engine here.
  }
};

const startContainer = async (): Promise<TestPostgres> => {
  const { PostgreSqlContainer } = await import("@testcontainers/postgresql");
  const container = await new PostgreSqlContainer("postgres:18-alpine").start();
  return { adminUrl: container.getConnectionUri(), kind: "container", stop: async () => void (await container.stop()) };
};

/** How the test server runs. */
export interface TestPostgresOptions {
  /**
   * Keep PostgreSQL's durability on: an embedded server is then started without `fsync=off`,
   * `synchronous_commit=off` and `full_page_writes=off` (so with the server defaults, all on), for
   * measurements that must pay what a production server pays. Default false: the fast test server.
   * A container runs with the image's defaults (durable) either way; an external server as it is.
   */
  readonly durable?: boolean;
}

/** Trades durability for speed: a crash may lose or corrupt a throwaway test database, nothing else. */
const FAST_FLAGS = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"];

/**
 * A started embedded server of a test's own on a free port, with data in a new temporary
 * directory (removed by `stop()` unless `persistent`), and the admin URL to reach it.
 */
export const startEmbeddedServer = async (options: { readonly persistent: boolean; readonly flags: ReadonlyArray<string> }) => {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const port = await freePort();
  const password = "platter-test";
  const databaseDir = await mkdtemp(join(tmpdir(), "platter-pg-"));
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    persistent: options.persistent,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: [...options.flags],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return { server, databaseDir, adminUrl: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` };
};

const startEmbedded = async (durable: boolean): Promise<TestPostgres> => {
  const { server, adminUrl } = await startEmbeddedServer({
    persistent: false,
    flags: [...(durable ? [] : FAST_FLAGS), "-c", "max_connections=300"],
  });
  return { adminUrl, kind: "embedded", stop: () => server.stop() };
};

/** Starts (or points at) the PostgreSQL server of this test run. */
export const startTestPostgres = async (options: TestPostgresOptions = {}): Promise<TestPostgres> => {
  const external = process.env["TEST_DATABASE_URL"];
  if (external) return { adminUrl: external, kind: "external", stop: async () => {} };
  return (await containerRuntimeAvailable()) ? startContainer() : startEmbedded(options.durable ?? false);
};
