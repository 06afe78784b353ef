import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitForDatabase } from "@platter/postgres";

/**
 * A real PgBouncer of a test's own, in transaction mode, in front of the test server: the
 * operator's pooler as Debian ships it (1.18, `apt install pgbouncer`). Tests that need one skip,
 * saying why in one line, on a machine without it.
 */

/** Where Debian's package puts the binary, or `pgbouncer` on PATH. */
const CANDIDATES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

/** The PgBouncer binary, or undefined when none is installed. */
export const pgBouncerBinary = (): string | undefined => CANDIDATES.find((path) => existsSync(path));

/** A running PgBouncer. */
export interface TestPgBouncer {
  /** `postgres://…` through the pooler, to `database`. */
  readonly urlOf: (database: string) => string;
  /** What it logged (its log file), for a failure's message. */
  readonly log: () => Promise<string>;
  readonly stop: () => Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });

/**
 * Starts PgBouncer in transaction mode with `serverConnections` server connections per database,
 * in front of the server of `adminUrl` (its user and password for every database). As root it
 * runs as `nobody` (PgBouncer refuses to run as root). It ignores no startup parameter, so a
 * process that sent `statement_timeout` as one would be refused.
 */
export const startTestPgBouncer = async (adminUrl: string, serverConnections: number): Promise<TestPgBouncer> => {
  const binary = pgBouncerBinary();
  if (binary === undefined) throw new Error("pgbouncer is not installed (apt install pgbouncer)");
  const upstream = new URL(adminUrl);
  const dir = await mkdtemp(join(tmpdir(), "platter-pgbouncer-"));
  await chmod(dir, 0o777);
  const port = await freePort();
  const config = `[databases]
* = host=${upstream.hostname} port=${upstream.port} user=${decodeURIComponent(upstream.username)} password=${decodeURIComponent(upstream.password)}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = any
pool_mode = transaction
default_pool_size = ${serverConnections}
max_client_conn = 500
logfile = ${join(dir, "pgbouncer.log")}
pidfile = ${join(dir, "pgbouncer.pid")}
`;
  const configPath = join(dir, "pgbouncer.ini");
  await writeFile(configPath, config, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = spawn(binary, [...(asRoot ? ["-u", "nobody"] : []), configPath], { stdio: "ignore" });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const urlOf = (database: string) => `postgres://${upstream.username}:${upstream.password}@127.0.0.1:${port}/${database}`;
  const log = () => readFile(join(dir, "pgbouncer.log"), "utf8").catch(() => "");
  try {
    await waitForDatabase(urlOf(upstream.pathname.slice(1) || "postgres"), 10_000, 2_000, () => {});
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`pgbouncer did not start: ${String(error)}\n${await log()}`);
  }
  return {
    urlOf,
    log,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
};
