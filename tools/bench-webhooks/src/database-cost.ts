import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

/**
 * What a drain costs the database, measured from outside the worker: rows written (the tables'
 * cumulative statistics) and WAL generated. Also the gate that holds a freshly started worker at
 * its first read of the queue, so start-up stays out of every per-delivery figure.
 */

/** Rows written in one table over a drain (deltas of pg_stat_user_tables). */
export interface TableWrites {
  readonly table: string;
  readonly inserts: number;
  readonly updates: number;
  /** Of `updates`, those that were HOT (no index entry written). */
  readonly hotUpdates: number;
  readonly deletes: number;
}

/** Rows written and WAL generated over a drain. */
export interface DatabaseCost {
  readonly tables: readonly TableWrites[];
  readonly inserts: number;
  readonly updates: number;
  readonly hotUpdates: number;
  readonly deletes: number;
  /** Bytes of WAL the cluster generated (pg_current_wal_insert_lsn delta; nothing else runs meanwhile). */
  readonly walBytes: number;
}

interface Snapshot {
  readonly tables: ReadonlyMap<string, Omit<TableWrites, "table">>;
  readonly lsn: string;
}

/**
 * Backends add their table statistics to the shared ones when a transaction ends, but at most once a
 * second; what is held back is sent when the backend next goes idle a second later or, if it stays
 * idle, after PGSTAT_IDLE_INTERVAL (10 s), and at once when it exits (PostgreSQL 15 and later). So
 * the counters show every earlier write once the writers have been idle this long, or have exited.
 */
export const STATS_IDLE_FLUSH_MS = 11_000;

/** A connection to the measured database that only reads statistics (it writes nothing). */
export class CostMeter {
  private readonly client: pg.Client;

  private constructor(client: pg.Client) {
    this.client = client;
  }

  static async open(databaseUrl: string): Promise<CostMeter> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new CostMeter(client);
  }

  /**
   * The tables' write counters and the WAL position. The caller makes sure the statistics are
   * complete: every writer idle for STATS_IDLE_FLUSH_MS, or gone.
   */
  async snapshot(): Promise<Snapshot> {
    // Each statement is its own transaction: the statistics are read fresh, not from a cached snapshot.
    await this.client.query("select pg_stat_clear_snapshot()");
    const { rows } = await this.client.query<{ table: string; ins: string; upd: string; hot: string; del: string }>(
      `select schemaname || '.' || relname as table, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del
       from pg_stat_user_tables`,
    );
    const { rows: [wal] } = await this.client.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn");
    return {
      tables: new Map(rows.map((r) => [r.table, { inserts: Number(r.ins), updates: Number(r.upd), hotUpdates: Number(r.hot), deletes: Number(r.del) }])),
      lsn: wal!.lsn,
    };
  }

  /** What was written between two snapshots. */
  async between(before: Snapshot, after: Snapshot): Promise<DatabaseCost> {
    const { rows: [wal] } = await this.client.query<{ bytes: string }>("select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint as bytes", [
      after.lsn, before.lsn,
    ]);
    const zero = { inserts: 0, updates: 0, hotUpdates: 0, deletes: 0 };
    const tables = [...after.tables].map(([table, a]) => {
      const b = before.tables.get(table) ?? zero;
      return {
        table, inserts: a.inserts - b.inserts, updates: a.updates - b.updates, hotUpdates: a.hotUpdates - b.hotUpdates, deletes: a.deletes - b.deletes,
      };
    }).filter((t) => t.inserts + t.updates + t.deletes > 0).sort((x, y) => x.table.localeCompare(y.table));
    const total = (field: keyof Omit<TableWrites, "table">) => tables.reduce((n, t) => n + t[field], 0);
    return {
      tables,
      inserts: total("inserts"),
      updates: total("updates"),
      hotUpdates: total("hotUpdates"),
      deletes: total("deletes"),
      walBytes: Number(wal!.bytes),
    };
  }

  /** Polls `countSql` (one row, column `n`) until it answers 0. */
  async waitUntilZero(countSql: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows: [row] } = await this.client.query<{ n: number | string }>(countSql);
      if (Number(row!.n) === 0) return;
      if (Date.now() > deadline) throw new Error(`still ${row!.n} unsettled after ${timeoutMs / 1000} s: ${countSql}`);
      await sleep(20);
    }
  }

  /** Backends connected to this database now (this one included). */
  async backends(): Promise<number[]> {
    const { rows } = await this.client.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database()");
    return rows.map((r) => r.pid);
  }

  /** Waits until no backend of this database is left but `kept`: those of stopped workers have exited (and sent their statistics). */
  async waitForOthersToExit(kept: readonly number[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows: [row] } = await this.client.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and not (pid = any($1::int[]))",
        [kept],
      );
      if (row!.n === 0) return;
      if (Date.now() > deadline) throw new Error(`${row!.n} backends of stopped workers still connected after ${timeoutMs / 1000} s`);
      await sleep(20);
    }
  }

  /** Backends of this database waiting for a lock right now. */
  async waitingBackends(): Promise<number> {
    const { rows: [row] } = await this.client.query<{ n: number }>(
      `select count(distinct pid)::int as n from pg_locks
       where not granted and database = (select oid from pg_database where datname = current_database())`,
    );
    return row!.n;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/**
 * Holds the queue table (ACCESS EXCLUSIVE, in an open transaction of its own) so a worker that
 * starts blocks at its first look at the queue; `release` lets it go. It writes nothing.
 */
export const holdQueue = async (databaseUrl: string, table: string): Promise<{ release: () => Promise<void> }> => {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("begin");
  await client.query(`lock table ${table} in access exclusive mode`);
  return {
    release: async () => {
      await client.query("commit");
      await client.end();
    },
  };
};

/** Checkpoints the whole server, so every drain starts from the same state (its first change of a page writes the full page). */
export const checkpoint = async (adminUrl: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query("checkpoint");
  } finally {
    await client.end();
  }
};
