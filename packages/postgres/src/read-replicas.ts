import pg from "pg";
import { watchSilence } from "./silence-watchdog.ts";

/**
 * Reads on streaming replicas (hot standbys), never staler than a bound. Each process measures
 * every replica against the primary: it samples the primary's WAL position with the time it asked,
 * then asks each replica how far it has replayed. A replica that has replayed the position the
 * primary had at time t holds everything committed before t, so it is "current as of" the newest
 * such sample. A read goes to a replica only while that time is less than `maxLagMs` ago; measured
 * so, an idle primary gives a lag of zero (nothing to replay), a paused or broken replay or a
 * replica that stopped answering ages out by itself, and the check's own age counts against the bound.
 */

/** Where reads may go besides the primary, and how stale they may be. */
export interface ReplicaSettings {
  /** PostgreSQL URLs of streaming replicas of the primary (hot standbys). */
  readonly urls: ReadonlyArray<string>;
  /** A replica further behind the primary than this is left out until it catches up. */
  readonly maxLagMs: number;
  /** Longest a replica may take to connect or to answer one read; that read then runs on the primary. */
  readonly timeoutMs: number;
}

/** Why a replica takes no reads right now, or `current`. */
export type ReplicaCondition = "current" | "lagging" | "unavailable" | "not a standby";

/** One replica as this process sees it. */
export interface ReplicaStats {
  /** `host:port/database` from its URL (never its password). */
  readonly name: string;
  readonly condition: ReplicaCondition;
  /** How far behind the primary it was at its last check (ms), when that check answered. */
  readonly lagMs: number | undefined;
  /** Reads it served. */
  readonly reads: number;
}

/** Where this process's reads went (see `ReadReplicas`). */
export interface ReadStats {
  /** Reads that could have gone to a replica and ran on the primary. */
  readonly primaryReads: number;
  readonly replicas: ReadonlyArray<ReplicaStats>;
  /** Reads sent to the primary because no replica was current: every one lagging, or not answering. */
  readonly fallbacks: { readonly lagging: number; readonly unavailable: number; readonly failed: number };
}

/** A replica's read pool and what the last checks found. */
interface Replica {
  readonly name: string;
  readonly pool: pg.Pool;
  /** `performance.now()` of the newest primary sample this replica has replayed (-Infinity: none, or it failed). */
  currentAsOf: number;
  lagMs: number | undefined;
  /** Its last check failed, or it failed a read since. */
  answering: boolean;
  standby: boolean;
  reads: number;
  /** What the operator was last told about it. */
  told: ReplicaCondition;
}

/** The reads of one process on its replicas (`openReadReplicas`). */
export interface ReadReplicas {
  /** Rows of a read-only statement on a current replica, else (or when the replica fails it) on the primary. */
  readonly rows: <Row>(query: pg.QueryConfig) => Promise<Row[]>;
  readonly stats: () => ReadStats;
  readonly close: () => Promise<void>;
}

/** `X/Y` (two hexadecimal halves) as one number. */
const lsnValue = (lsn: string): bigint => {
  const [high = "0", low = "0"] = lsn.split("/");
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

/** `host:port/database` of a URL, without its credentials. */
export const replicaName = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
};

/**
 * Opens a read pool per replica (`poolSize` connections each, the primary's type parsers) and
 * checks them every quarter of the bound. `primary` runs the reads no replica can take;
 * `onCondition` is told each time a replica leaves the reads or comes back.
 */
export const openReadReplicas = (
  primary: pg.Pool,
  settings: ReplicaSettings,
  poolSize: number,
  onCondition: (name: string, condition: ReplicaCondition, lagMs: number | undefined) => void = () => {},
): ReadReplicas => {
  // The primary pool's type parsers and session options (generic plans, see `DatabaseConnection`).
  const { types, options } = (primary as unknown as { options: { types?: unknown; options?: string } }).options;
  const stops: Array<() => void> = [];
  const replicas: Replica[] = settings.urls.map((url) => {
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: settings.timeoutMs,
      statement_timeout: settings.timeoutMs,
      ...(types === undefined ? {} : { types: types as pg.CustomTypesConfig }),
      ...(options === undefined ? {} : { options }),
    });
    // A connection the server dropped is reported here; its read has already failed over.
    pool.on("error", () => {});
    stops.push(watchSilence(pool, settings.timeoutMs));
    return { name: replicaName(url), pool, currentAsOf: -Infinity, lagMs: undefined, answering: false, standby: true, reads: 0, told: "current" };
  });
  /** Samples of the primary's WAL position, oldest first, kept for twice the bound. */
  const samples: Array<{ readonly at: number; readonly lsn: bigint }> = [];
  const fallbacks = { lagging: 0, unavailable: 0, failed: 0 };
  let primaryReads = 0;

  const conditionOf = (replica: Replica, now: number): ReplicaCondition =>
    !replica.standby ? "not a standby"
    : now - replica.currentAsOf <= settings.maxLagMs ? "current"
    : replica.answering ? "lagging"
    : "unavailable";

  const tell = (replica: Replica) => {
    const condition = conditionOf(replica, performance.now());
    if (condition !== replica.told) onCondition(replica.name, condition, replica.lagMs);
    replica.told = condition;
  };

  const checkReplica = async (replica: Replica) => {
    try {
      const { rows: [row] } = await replica.pool.query<{ standby: boolean; lsn: string | null }>(
        "select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as lsn",
      );
      const checkedAt = performance.now();
      replica.answering = true;
      replica.standby = row?.standby === true && row.lsn !== null;
      if (!replica.standby) {
        replica.currentAsOf = -Infinity;
        replica.lagMs = undefined;
        return;
      }
      const replayed = lsnValue(row!.lsn!);
      const caughtUp = samples.findLast((sample) => sample.lsn <= replayed);
      if (caughtUp !== undefined) replica.currentAsOf = Math.max(replica.currentAsOf, caughtUp.at);
      replica.lagMs = Number.isFinite(replica.currentAsOf) ? Math.round(checkedAt - replica.currentAsOf) : undefined;
    } catch {
      replica.answering = false;
      replica.currentAsOf = -Infinity;
      replica.lagMs = undefined;
    } finally {
      tell(replica);
    }
  };

  let checking = false;
  const check = async () => {
    // A check still waiting on a silent server is not doubled; its replicas age out meanwhile.
    if (checking) return;
    checking = true;
    try {
      // Asked before the primary answers: everything committed before this moment is at or below its position.
      const at = performance.now();
      const { rows: [row] } = await primary.query<{ lsn: string }>("select pg_current_wal_lsn()::text as lsn");
      samples.push({ at, lsn: lsnValue(row!.lsn) });
      while (samples.length > 1 && samples[0]!.at < at - 2 * settings.maxLagMs) samples.shift();
      await Promise.all(replicas.map(checkReplica));
    } catch {
      // The primary did not answer: no new sample, so the replicas age out; reads fail over to it as usual.
      for (const replica of replicas) tell(replica);
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), Math.max(25, Math.floor(settings.maxLagMs / 4)));
  timer.unref();
  void check();

  let turn = 0;
  const onPrimary = async <Row>(query: pg.QueryConfig) => {
    primaryReads++;
    return (await primary.query(query)).rows as Row[];
  };
  const rows = async <Row>(query: pg.QueryConfig): Promise<Row[]> => {
    const now = performance.now();
    const current = replicas.filter((replica) => conditionOf(replica, now) === "current");
    if (current.length === 0) {
      if (replicas.some((replica) => replica.answering)) fallbacks.lagging++;
      else fallbacks.unavailable++;
      return onPrimary(query);
    }
    const replica = current[turn++ % current.length]!;
    try {
      const result = await replica.pool.query(query);
      replica.reads++;
      return result.rows as Row[];
    } catch {
      // Down, silent past the timeout, or a query cancelled by recovery: out until its next check answers.
      replica.answering = false;
      replica.currentAsOf = -Infinity;
      tell(replica);
      fallbacks.failed++;
      return onPrimary(query);
    }
  };

  return {
    rows,
    stats: () => {
      const now = performance.now();
      return {
        primaryReads,
        replicas: replicas.map((replica) => ({
          name: replica.name, condition: conditionOf(replica, now), lagMs: replica.lagMs, reads: replica.reads,
        })),
        fallbacks: { ...fallbacks },
      };
    },
    close: async () => {
      clearInterval(timer);
      for (const stop of stops) stop();
      await Promise.all(replicas.map((replica) => replica.pool.end()));
    },
  };
};
