import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

/**
 * What a drain costs the database, measured from outside the worker: rows written and read (the
 * tables' cumulative statistics) and WAL generated. Also the gate that holds a freshly started worker at
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

/** Rows and pages one table read over a measurement (deltas of pg_stat_user_tables, pg_stat_user_indexes, pg_statio_user_tables). */
export interface TableReads {
  readonly table: string;
  /** Rows read by sequential scans (seq_tup_read). */
  readonly seqRows: number;
  /** Index entries returned by its indexes' scans (idx_tup_read, summed over its indexes). */
  readonly indexEntries: number;
  /** Live rows fetched from the table by index scans (idx_tup_fetch). */
  readonly fetchedRows: number;
  /** Pages of the table and its indexes asked of the buffer cache (hits and reads). */
  readonly pages: number;
}

/** Rows written and WAL generated over a drain. */
export interface DatabaseCost {
  readonly tables: readonly TableWrites[];
  /** What the tables read meanwhile (tables with no reads left out). */
  readonly reads: readonly TableReads[];
  readonly inserts: number;
  readonly updates: number;
  readonly hotUpdates: number;
  readonly deletes: number;
  /** Bytes of WAL the cluster generated (pg_current_wal_insert_lsn delta; nothing else runs meanwhile). */
  readonly walBytes: number;
}

type TableCounters = Omit<TableWrites, "table"> & Omit<TableReads, "table">;

interface Snapshot {
  readonly tables: ReadonlyMap<string, TableCounters>;
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
   * The tables' write and read counters and the WAL position. The caller makes sure the statistics
   * are complete: every backend that used the tables idle for STATS_IDLE_FLUSH_MS, or gone.
   */
  async snapshot(): Promise<Snapshot> {
    // Each statement is its own transaction: the statistics are read fresh, not from a cached snapshot.
    await this.client.query("select pg_stat_clear_snapshot()");
    const { rows } = await this.client.query<{
      table: string; ins: string; upd: string; hot: string; del: string; seq: string; entries: string; fetched: string; pages: string;
    }>(
      `select t.schemaname || '.' || t.relname as table, t.n_tup_ins as ins, t.n_tup_upd as upd, t.n_tup_hot_upd as hot,
         t.n_tup_del as del, coalesce(t.seq_tup_read, 0) as seq, coalesce(t.idx_tup_fetch, 0) as fetched,
         (select coalesce(sum(i.idx_tup_read), 0) from pg_stat_user_indexes i where i.relid = t.relid) as entries,
         coalesce(io.heap_blks_hit, 0) + coalesce(io.heap_blks_read, 0) + coalesce(io.idx_blks_hit, 0) + coalesce(io.idx_blks_read, 0) as pages
       from pg_stat_user_tables t join pg_statio_user_tables io on io.relid = t.relid`,
    );
    const { rows: [wal] } = await this.client.query<{ lsn: string }>("select pg_current_wal_insert_lsn()::text as lsn");
    return {
      tables: new Map(rows.map((r) => [r.table, {
        inserts: Number(r.ins), updates: Number(r.upd), hotUpdates: Number(r.hot), deletes: Number(r.del),
        seqRows: Number(r.seq), indexEntries: Number(r.entries), fetchedRows: Number(r.fetched), pages: Number(r.pages),
      }])),
      lsn: wal!.lsn,
    };
  }

  /** What was written between two snapshots. */
  async between(before: Snapshot, after: Snapshot): Promise<DatabaseCost> {
    const { rows: [wal] } = await this.client.query<{ bytes: string }>("select pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::bigint as bytes", [
      after.lsn, before.lsn,
    ]);
    const zero: TableCounters = { inserts: 0, updates: 0, hotUpdates: 0, deletes: 0, seqRows: 0, indexEntries: 0, fetchedRows: 0, pages: 0 };
    const deltas = [...after.tables].map(([table, a]) => {
      const b = before.tables.get(table) ?? zero;
      const delta = (field: keyof TableCounters) => a[field] - b[field];
      return {
        table, inserts: delta("inserts"), updates: delta("updates"), hotUpdates: delta("hotUpdates"), deletes: delta("deletes"),
        seqRows: delta("seqRows"), indexEntries: delta("indexEntries"), fetchedRows: delta("fetchedRows"), pages: delta("pages"),
      };
    }).sort((x, y) => x.table.localeCompare(y.table));
    const tables = deltas.filter((t) => t.inserts + t.updates + t.deletes > 0)
      .map(({ table, inserts, updates, hotUpdates, deletes }) => ({ table, inserts, updates, hotUpdates, deletes }));
    const reads = deltas.filter((t) => t.seqRows + t.indexEntries + t.fetchedRows + t.pages > 0)
      .map(({ table, seqRows, indexEntries, fetchedRows, pages }) => ({ table, seqRows, indexEntries, fetchedRows, pages }));
    const total = (field: keyof Omit<TableWrites, "table">) => tables.reduce((n, t) => n + t[field], 0);
    return {
      tables,
      reads,
      inserts: total("inserts"),
      updates: total("updates"),
      hotUpdates: total("hotUpdates"),
      deletes: total("deletes"),
      walBytes: Number(wal!.bytes),
    };
  }

  /** The number `countSql` answers (one row, column `n`). */
  async count(countSql: string): Promise<number> {
    const { rows: [row] } = await this.client.query<{ n: number | string }>(countSql);
    return Number(row!.n);
  }

  /** Runs a set-up statement of the benchmark's own (never the code measured). */
  async run(statement: string, params: unknown[] = []): Promise<void> {
    await this.client.query(statement, params);
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
