import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU meter: CPU seconds spent so far by the server process under load and by our PostgreSQL
 * instance, read from /proc (Linux). Divided by the requests of a slice it says where each
 * request's time goes, a figure that noisy neighbours disturb far less than throughput.
 * Where /proc or the PostgreSQL processes cannot be read, it reports `undefined`.
 */

export interface CpuSeconds {
  readonly server: number | undefined;
  readonly postgres: number | undefined;
}

export type CpuMeter = () => CpuSeconds;

/** /proc reports times in USER_HZ, which Linux fixes at 100 for user space. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime of the process itself. */
  readonly own: number;
  /** cutime + cstime: children that exited and were waited for. */
  readonly reaped: number;
}

const readStat = (pid: number): ProcStat | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const tick = (i: number) => Number(fields[i]) / TICKS_PER_SECOND;
    return { pid, ppid: Number(fields[1]), own: tick(11) + tick(12), reaped: tick(13) + tick(14) };
  } catch {
    return undefined; // gone, or no /proc
  }
};

const allPids = (): number[] => {
  try {
    return readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return [];
  }
};

/** The postmaster listening on `port`: its command line carries `-p <port>`. */
const findPostmaster = (port: number): number | undefined =>
  allPids().find((pid) => {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const flag = args.indexOf("-p");
      return flag >= 0 && args[flag + 1] === String(port) && args.some((arg) => arg.endsWith("postgres"));
    } catch {
      return false;
    }
  });

/** The whole instance: the postmaster, its live children (backends, writers) and those already reaped. */
const postgresCpu = (postmaster: number): number | undefined => {
  const root = readStat(postmaster);
  if (root === undefined) return undefined;
  let total = root.own + root.reaped;
  for (const pid of allPids()) {
    const stat = readStat(pid);
    if (stat?.ppid === postmaster) total += stat.own;
  }
  return total;
};

/** A meter for the server process `serverPid` and the PostgreSQL instance on `postgresPort`. */
export const cpuMeter = (serverPid: number | undefined, postgresPort: number): CpuMeter => {
  const postmaster = findPostmaster(postgresPort);
  return () => ({
    server: serverPid === undefined ? undefined : readStat(serverPid)?.own,
    postgres: postmaster === undefined ? undefined : postgresCpu(postmaster),
  });
};
