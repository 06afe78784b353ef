import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU time of processes from /proc (Linux), so a run can say whether the worker or PostgreSQL was
 * the busy one. Elsewhere (or for a PostgreSQL that is not a local process) the figures are absent.
 */

/** USER_HZ: the unit of /proc/<pid>/stat times; 100 on every Linux we run on. */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  readonly ppid: number;
  /** utime + stime, in seconds. */
  readonly own: number;
  /** cutime + cstime of reaped children, in seconds. */
  readonly children: number;
}

const readStat = (pid: number): ProcStat | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may itself hold spaces and parentheses; [0] is field 3.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ").map(Number);
    return {
      ppid: fields[1]!,
      own: (fields[11]! + fields[12]!) / TICKS_PER_SECOND,
      children: (fields[13]! + fields[14]!) / TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
};

/** CPU seconds a process (all its threads) has used so far. */
export const processCpuSeconds = (pid: number | undefined): number | undefined =>
  pid === undefined ? undefined : readStat(pid)?.own;

/** CPU seconds a PostgreSQL server has used so far: the postmaster, its live backends, and reaped ones. */
export const postgresCpuSeconds = (postmasterPid: number | undefined): number | undefined => {
  if (postmasterPid === undefined) return undefined;
  const postmaster = readStat(postmasterPid);
  if (postmaster === undefined) return undefined;
  let total = postmaster.own + postmaster.children;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.ppid === postmasterPid) total += stat.own;
  }
  return total;
};

/** The postmaster of the server a backend runs in: its parent process, when that is visible here. */
export const parentPid = (pid: number): number | undefined => readStat(pid)?.ppid;
