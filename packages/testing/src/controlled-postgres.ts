import { readdir, readFile, rm } from "node:fs/promises";
import { startEmbeddedServer } from "./test-postgres.ts";

/**
 * A PostgreSQL server of a test's own, for fault tests: stopped (fast or immediate shutdown),
 * frozen (SIGSTOP, as a hung machine) and started again for real. Signals go only to the server
 * this test started and its own child processes.
 */
export interface ControlledPostgres {
  /** URL of a role allowed to create databases. */
  readonly adminUrl: string;
  /** `fast` (SIGINT: ends sessions, checkpoints) or `immediate` (SIGQUIT: as a crash, recovers at start). */
  readonly stop: (mode: "fast" | "immediate") => Promise<void>;
  readonly start: () => Promise<void>;
  /** Stops every process of the server in place: connections stay open and nothing answers. */
  readonly freeze: () => Promise<void>;
  readonly thaw: () => Promise<void>;
  /** Stops the server and removes its data. */
  readonly dispose: () => Promise<void>;
}

/** The server process and every process it started (its backends and workers), by pid. */
export const processTree = async (root: number): Promise<number[]> => {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // pid (comm) state ppid …: comm may hold spaces, so read after its closing parenthesis.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (Number.isInteger(ppid)) parents.set(Number(entry), ppid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  }
  return tree;
};

export const startControlledPostgres = async (): Promise<ControlledPostgres> => {
  const { server, databaseDir, adminUrl } = await startEmbeddedServer({
    persistent: true,
    // A commit is written out (synchronous_commit on), so it survives the server's crash; fsync off
    // only skips forcing it to disk, which matters for a crash of the machine, not simulated here.
    flags: ["-c", "fsync=off"],
  });
  const postmaster = () => (server as unknown as { process?: import("node:child_process").ChildProcess }).process;
  const signalAll = async (signal: NodeJS.Signals) => {
    const pid = postmaster()?.pid;
    if (pid === undefined) throw new Error("the controlled PostgreSQL is not running");
    for (const member of await processTree(pid)) {
      try {
        process.kill(member, signal);
      } catch {
        // gone meanwhile
      }
    }
  };
  const stop = async (mode: "fast" | "immediate") => {
    const child = postmaster();
    if (child === undefined) return;
    if (mode === "fast") return server.stop();
    await new Promise<void>((done) => {
      child.once("exit", () => done());
      child.kill("SIGQUIT");
    });
    (server as unknown as { process?: unknown }).process = undefined;
  };
  return {
    adminUrl,
    stop,
    start: () => server.start(),
    freeze: () => signalAll("SIGSTOP"),
    thaw: () => signalAll("SIGCONT"),
    dispose: async () => {
      if (postmaster() !== undefined) await signalAll("SIGCONT").catch(() => {});
      await stop("fast");
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
};
