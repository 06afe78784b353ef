import type { DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { driverCall } from "@platter/postgres";
import { Database } from "./database.ts";
import { nowPlus } from "./database-clock.ts";
import { raw, sql, type Statement } from "./org-sql.ts";
import { ENDED_DELIVERY_OF_EXPIRED_HISTORY } from "./webhooks/attempt-record.ts";

/**
 * History partitioned by time: "families" of tables range-partitioned on a time column with the
 * same bounds, made ahead of the clock and forgotten by dropping whole partitions (never by deleting
 * rows). A partition is named `<table>_p<its lower bound, UTC, YYYYMMDDHHMMSS>`. A new partition
 * always starts at the last one's upper bound, so processes with different widths never overlap; a
 * partition made for older rows (`cover`) ends at the first one's lower bound. There is no DEFAULT
 * partition (it would forbid `detach … concurrently`): a row no partition takes is refused
 * (`database-availability.ts` answers it as an outage, 503, and the API logs it).
 */

/** A family: tables whose partitions share bounds and go together, the first one read for the bounds. */
export interface HistoryFamily {
  /** A short name for logs and the advisory lock. */
  readonly name: string;
  /**
   * Its tables in drop order (the ones that refer to others first), each with its partitions' storage parameters, if
   * any, and whether its rows are found by id (`idMarks`: `makeAhead` marks its ids, `rowTimeById` reads the marks).
   */
  readonly tables: ReadonlyArray<{ readonly table: string; readonly storage?: string; readonly idMarks?: boolean }>;
  /** Whether it holds webhook deliveries, whose pending ones are settled before their partition goes (`settleExpiring`). */
  readonly pendingDeliveries?: boolean;
}

/** Webhook history: messages, their deliveries (same `created_at`) and the deliveries' attempts (`delivery_created_at`). */
export const WEBHOOK_HISTORY: HistoryFamily = {
  name: "webhook history",
  pendingDeliveries: true,
  tables: [
    { table: "webhook_attempts" },
    // HOT claims: half of each page is left free for the claim's and the record's updates.
    { table: "webhook_deliveries", storage: "fillfactor = 50", idMarks: true },
    { table: "webhook_messages", idMarks: true },
  ],
};

/** The organizations' request log (`api_requests`), by the time its request arrived (`at`). */
export const REQUEST_HISTORY: HistoryFamily = {
  name: "request history",
  tables: [{ table: "api_requests" }],
};

/** One partition of a family, by its bounds. */
export interface HistoryPartition {
  readonly from: Date;
  readonly to: Date;
}

/** SQL for the bounds of every partition of `table`: `(name, lower, upper, detach_pending)`. */
const partitionsOf = (table: string) => `
  select c.relname as name,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as lower,
    (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as upper,
    i.inhdetachpending as detach_pending
  from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = '${table}'::regclass`;

/**
 * Bounds one `makeAhead` statement makes at most: a minute's width 2 hours ahead is 120 of them (360 tables), more
 * than one statement makes within the statement timeout on a loaded host; `makeAhead` repeats it until it is done.
 */
const BOUNDS_PER_STATEMENT = 24;
/** Statements one `makeAhead` runs at most (a process with another width may be remaking the same range meanwhile). */
const MAKE_AHEAD_STATEMENTS = 100;

/** Batches of pending deliveries `forgetExpired` settles in one turn at most, so a turn never runs long. */
const SETTLE_BATCHES_PER_TURN = 100;

/** The first half of the advisory lock key held while a family's partitions are dropped (making them holds 32's). */
const DROP_LOCK = 33;

/** A table name or a number checked before it is written into DDL (DO blocks take no parameters). */
const identifier = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return name;
};
const milliseconds = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 1) throw new Error(`not a duration: ${ms}`);
  return String(Math.trunc(ms));
};

/**
 * A DO block on the family's tables under its advisory lock (several processes may run it at once: the
 * second waits, then finds the first's partitions). It declares `width` (`widthMs`), `t` and `name`
 * for `makeAndAttach`, and `declarations` of its own; `body` runs after the lock is had.
 */
const familyBlock = (family: HistoryFamily, widthMs: number, declarations: string, body: string) => `do $$ declare
      width interval := ${milliseconds(widthMs)} * interval '1 millisecond';
      ${declarations}
      t text[];
      name text;
    begin
      -- Another process making the family's partitions is waited for (within the statement timeout: each block is
      -- bounded, BOUNDS_PER_STATEMENT). Then a lock it cannot have at once (a foreign key's on webhook_endpoints) is
      -- waited for at most 2 s, not queueing the statements behind it; the next sweep tries again (partitions are made well ahead).
      perform pg_advisory_xact_lock(32, hashtext('${family.name}'));
      perform set_config('lock_timeout', '2000', true);
      ${body}
    end $$`;

/**
 * PL/pgSQL (inside `familyBlock`) making each of the family's tables a partition for `[lower, upper)`
 * (SQL expressions of the block's variables), named for `lower`: made beside the table, then attached.
 */
const makeAndAttach = (family: HistoryFamily, lower: string, upper: string) => {
  const tables = family.tables.map(({ table, storage }) => `['${identifier(table)}', '${storage === undefined ? "" : ` with (${storage})`}']`);
  return `foreach t slice 1 in array array[${tables.join(", ")}] loop
          -- Attaching locks the parent only SHARE UPDATE EXCLUSIVE, so reads and writes go on (a partition
          -- made with PARTITION OF would lock it ACCESS EXCLUSIVE).
          name := t[1] || '_p' || to_char(${lower} at time zone 'UTC', 'YYYYMMDDHH24MISS');
          execute format('create table %I (like %I including defaults including constraints)%s', name, t[1], t[2]);
          execute format('alter table %I attach partition %I for values from (%L) to (%L)', t[1], name, ${lower}, ${upper});
        end loop;`;
};

/**
 * PL/pgSQL (inside `makePartitions`' block) replacing partitions made at a greater width that hold no
 * row yet: those the migration made a day each, or ones made ahead before the retention was
 * shortened. From the first partition not yet ended that is wider than `width` and empty in every
 * table, with every later one empty too, all are dropped (the family's tables locked for it, within
 * the block's lock timeout), and `resumed` is set where new ones start: the width's boundary 5 minutes
 * before now (a transaction begun a little earlier still finds a partition for its rows). A
 * partition holding a row is never touched: history already written keeps its bounds.
 */
const replaceWiderEmpty = (family: HistoryFamily) => {
  const first = identifier(family.tables[0]!.table);
  const tables = family.tables.map(({ table }) => `'${identifier(table)}'`).join(", ");
  const fromWide = `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
              join unnest(array[${tables}]) f(parent) on i.inhparent = f.parent::regclass
              where (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz >= wide.lower`;
  return `for wide in select p.lower from (${partitionsOf(first)}) p where p.upper > now() and p.upper - p.lower > width order by p.lower loop
        -- It and every later partition must hold nothing, in every table: looked at first without a lock (a
        -- partition with rows costs one page), then again with the tables locked, before they go.
        for pass in 1..2 loop
          if pass = 2 then
            execute 'lock table ' || array_to_string(array[${tables}], ', ') || ' in access exclusive mode';
          end if;
          empty := true;
          for name in ${fromWide} loop
            execute format('select not exists (select 1 from %I)', name) into empty;
            exit when not empty;
          end loop;
          exit when not empty;
        end loop;
        continue when not empty;
        for name in ${fromWide} loop
          execute format('drop table %I', name);
        end loop;
        resumed := date_bin(width, now() - interval '5 minutes', timestamptz '2000-01-01 00:00:00+00');
        exit;
      end loop;`;
};

/**
 * A DO block that makes the family's partitions for `[lower, stop)` from `lower` on, `width` each,
 * under the family's advisory lock (`familyBlock`), at most `BOUNDS_PER_STATEMENT` of them (`makeAhead`
 * runs it again until `stop` is held). `start` is SQL for the first lower bound when none exists.
 */
const makePartitions = (family: HistoryFamily, widthMs: number, start: string, stop: string) =>
  familyBlock(
    family,
    widthMs,
    `stop timestamptz := ${stop};
      lower timestamptz;
      made int := 0;
      resumed timestamptz;
      wide record;
      empty boolean;`,
    `${replaceWiderEmpty(family)}
      select max(p.upper) into lower from (${partitionsOf(identifier(family.tables[0]!.table))}) p;
      lower := coalesce(greatest(lower, resumed), ${start});
      while lower < stop and made < ${BOUNDS_PER_STATEMENT} loop
        ${makeAndAttach(family, "lower", "lower + width")}
        lower := lower + width;
        made := made + 1;
      end loop;`,
  );

/**
 * The DO block behind `HistoryPartitions.cover`: partitions of `width` each, stepping back from the first
 * partition's lower bound until `from` is held (after 100 of them, one partition takes the rest back to
 * `from`'s width boundary). Nothing when a partition already holds `from`. (Exported for @platter/testing's backdating.)
 */
export const coverPartitionSql = (family: HistoryFamily, from: Date, widthMs: number): string =>
  familyBlock(
    family,
    widthMs,
    `target timestamptz := date_bin(width, '${from.toISOString()}'::timestamptz, timestamptz '2000-01-01 00:00:00+00');
      lower timestamptz;
      upper timestamptz;
      made int := 0;`,
    `select min(p.lower) into upper from (${partitionsOf(identifier(family.tables[0]!.table))}) p;
      if upper is null then return; end if;
      while upper > target loop
        lower := case when made >= 100 then target else greatest(target, upper - width) end;
        ${makeAndAttach(family, "lower", "upper")}
        upper := lower;
        made := made + 1;
      end loop;`,
  );

/**
 * A DO block that marks the ids of the family's tables found by id (`idMarks`): for each, its identity sequence's
 * last value, read before the lower bound of its nearest partition ahead, stored as that partition's mark in
 * `history_id_marks`. Why a mark bounds a row's time: a row's `created_at` is at most the start of the transaction
 * that drew its id (its message's `now()`, or earlier when backdated), and the ids are drawn in order (an identity,
 * cache 1), so a row whose id is at most the value read had its id drawn, and its `created_at`, before the read, which
 * was before the bound. (A row inserted with an explicit id, or dated later than its insert, would break it: nothing of
 * ours does either.) Made at every `makeAhead`, so with sweeps more frequent than the width every partition gets one
 * (the greatest value read before its bound); a partition without one costs a lookup a partition more, never a row.
 */
const markIdsSql = (family: HistoryFamily): string | undefined => {
  const marked = family.tables.filter((table) => table.idMarks === true).map(({ table }) => identifier(table));
  if (marked.length === 0) return undefined;
  return `do $$ declare
      lower timestamptz;
      last bigint;
    begin
      ${marked.map((table) => `
      select min(p.lower) into lower from (${partitionsOf(table)}) p where p.lower > clock_timestamp();
      last := pg_sequence_last_value(pg_get_serial_sequence('${table}', 'id'));
      -- Only a value read before the bound marks it.
      if lower is not null and last is not null and clock_timestamp() < lower then
        insert into history_id_marks (table_name, partition_from, last_id) values ('${table}', lower, last)
          on conflict (table_name, partition_from) do update set last_id = greatest(history_id_marks.last_id, excluded.last_id);
      end if;`).join("")}
    end $$`;
};

/** The history tables whose rows are found by id (`idMarks`). */
export type TableFoundById = "webhook_deliveries" | "webhook_messages";

/**
 * SQL for a time every row of `table` with id `id` was made before: the lower bound of the first partition whose
 * mark holds the id, else the clock (a row this statement reads was committed, so its transaction started, before
 * the clock is read; a minute more for the clock's own adjustments). Pruned at run time: a row searched for by id
 * newest first (`order by created_at desc limit 1`, or `rowTimeById`) is found reading about one partition, where the
 * id alone probed every partition's primary key. A row made long before its id was drawn (backdated, or by a long
 * transaction) costs a probe per partition between; never a wrong or missing row.
 */
export const madeBeforeById = (table: TableFoundById, id: number): Statement =>
  sql`coalesce(
      (select min(k.partition_from) from history_id_marks k where k.table_name = ${raw(`'${table}'`)} and k.last_id >= ${id}),
      (select clock_timestamp() + interval '1 minute'))`;

/**
 * SQL for the `created_at` of `table`'s row `id` (the organization's; null when there is none), found newest first
 * before `madeBeforeById`: a statement that also gives `created_at = <this>` with the id (an update, which takes no
 * order nor limit) reads one partition.
 */
export const rowTimeById = (table: TableFoundById, organizationId: number, id: number): Statement =>
  sql`(select x.created_at from ${raw(table)} x where x.organization_id = ${organizationId} and x.id = ${id}
    and x.created_at < ${madeBeforeById(table, id)} order by x.created_at desc limit 1)`;

export class HistoryPartitions extends Context.Service<
  HistoryPartitions,
  {
    /**
     * Makes the family's partitions, `widthMs` each from the last one's upper bound (from the
     * current width's boundary when there is none), until `aheadMs` past the database's now.
     * Idempotent; safe when several processes run it at once.
     */
    readonly makeAhead: (family: HistoryFamily, widthMs: number, aheadMs: number) => Effect.Effect<void, DatabaseUnavailable>;
    /**
     * Makes partitions for rows older than every partition, `widthMs` each back from the first
     * one's lower bound until `from` is held (`coverPartitionSql`): seeded or backdated rows.
     */
    readonly cover: (family: HistoryFamily, from: Date, widthMs: number) => Effect.Effect<void, DatabaseUnavailable>;
    /** The family's partitions, oldest first. */
    readonly list: (family: HistoryFamily) => Effect.Effect<ReadonlyArray<HistoryPartition>, DatabaseUnavailable>;
    /**
     * Ends up to `batchSize` deliveries still pending (a listener's too) that are older than
     * `retentionMs` themselves (the database's clock; their partition's lower bound is then too):
     * failed, `SETTLED_HISTORY_EXPIRED`, lease cleared, no attempt written and no notice; replayable
     * until the partition goes. One made late in a partition whose start passed the retention is
     * sent until then. Returns how many.
     */
    readonly settleExpiring: (retentionMs: number, batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Detaches (concurrently: inserts and reads go on) and drops every partition of the family
     * whose upper bound is older than `retentionMs`, each table's partition of the same bounds
     * together. One process at a time: under the family's drop lock, tried and never waited for (held by a
     * transaction of its own that touches no table, beside the statements, which run on the pool: a detach
     * `concurrently` cannot run in a transaction); a process that finds it held drops nothing this turn and
     * returns 0. Needs two of the pool's connections. Returns how many bounds went.
     */
    readonly dropExpired: (family: HistoryFamily, retentionMs: number) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Retention's turn for the family, the one every process runs (the dispatcher's sweep, the API's
     * request log, the benchmark): where the family has deliveries, those pending and older than
     * `retentionMs` settled in batches of `batchSize` (`settleExpiring`, at most
     * `SETTLE_BATCHES_PER_TURN` of them: the next turn goes on), then the expired partitions
     * dropped (`dropExpired`). Returns how many deliveries were settled and how many bounds went.
     */
    readonly forgetExpired: (
      family: HistoryFamily, retentionMs: number, batchSize: number,
    ) => Effect.Effect<{ readonly settled: number; readonly dropped: number }, DatabaseUnavailable>;
  }
>()("platter/persistence/HistoryPartitions") {
  static readonly layer = Layer.effect(
    HistoryPartitions,
    Effect.gen(function* () {
      const { rows, orm } = yield* Database;
      const list = (family: HistoryFamily) =>
        Effect.map(
          rows<{ lower: Date; upper: Date }>(`select p.lower, p.upper from (${partitionsOf(identifier(family.tables[0]!.table))}) p order by p.lower`),
          (found) => found.map((p) => ({ from: new Date(p.lower), to: new Date(p.upper) })),
        );
      const steps: Omit<HistoryPartitions["Service"], "forgetExpired"> = {
        makeAhead: Effect.fnUntraced(function* (family: HistoryFamily, widthMs: number, aheadMs: number) {
          const stop = nowPlus(aheadMs);
          for (let statement = 0; statement < MAKE_AHEAD_STATEMENTS; statement++) {
            yield* rows(makePartitions(family, widthMs, `date_bin(width, now(), timestamptz '2000-01-01 00:00:00+00')`, stop));
            const [held] = yield* rows<{ done: boolean }>(
              `select coalesce(max(p.upper) >= ${stop}, false) as done from (${partitionsOf(identifier(family.tables[0]!.table))}) p`,
            );
            if (held?.done === true) break;
          }
          const marks = markIdsSql(family);
          if (marks !== undefined) yield* rows(marks);
        }),
        cover: (family, from, widthMs) => Effect.asVoid(rows(coverPartitionSql(family, from, widthMs))),
        list,
        settleExpiring: (retentionMs, batchSize) => {
          const cutoff = nowPlus(-retentionMs);
          return Effect.map(
            rows<{ n: number }>(
              `with edge as (
                 -- The upper bound of the partition the cut-off falls in: every delivery before it is in a partition whose lower bound has passed.
                 select coalesce(max(p.upper) filter (where p.lower <= ${cutoff}), '-infinity') as upper
                 from (${partitionsOf("webhook_deliveries")}) p
               ),
               expiring as (
                 select d.id, d.created_at from webhook_deliveries d
                 -- Older than the retention itself: a delivery made late in its partition is sent, not settled, until then.
                 where d.status = 'pending' and d.created_at < (select upper from edge) and d.created_at < ${cutoff}
                 limit ? for update of d skip locked
               ),
               settled as (
                 update webhook_deliveries d set ${ENDED_DELIVERY_OF_EXPIRED_HISTORY}
                 from expiring e where d.id = e.id and d.created_at = e.created_at returning 1
               )
               select count(*)::int as n from settled`,
              [batchSize],
            ),
            ([row]) => row?.n ?? 0,
          );
        },
        dropExpired: (family, retentionMs) =>
          Effect.acquireUseRelease(
            driverCall(async () => {
              const fork = orm.em.fork();
              await fork.begin();
              return fork;
            }),
            (lock) => Effect.gen(function* () {
              const [held] = yield* driverCall(() =>
                lock.execute<Array<{ locked: boolean }>>(`select pg_try_advisory_xact_lock(${DROP_LOCK}, hashtext(?)) as locked`, [family.name]));
              // Another process is dropping the family's partitions this turn: what it leaves, the next turn finds.
              if (held?.locked !== true) return 0;
              // Between statements the lock's connection answers something: the silence watchdog gives up a checked-out
              // connection that reads nothing for longer than a statement may run, and these may run that long together.
              const onPool = (text: string, values?: ReadonlyArray<unknown>) =>
                Effect.andThen(driverCall(() => lock.execute("select 1")), rows<{ name: string; detach_pending: boolean }>(text, values));
              const cutoff = nowPlus(-retentionMs);
              let dropped = 0;
              // Every table's: a drop stopped half-way (its process stopped) leaves the bounds in some tables only.
              const [bounds] = yield* rows<{ uppers: Date[] }>(
                `select coalesce(array_agg(distinct p.upper), '{}') as uppers
                 from (${family.tables.map(({ table }) => partitionsOf(identifier(table))).join(" union all ")}) p where p.upper <= ${cutoff}`,
              );
              for (const upper of bounds?.uppers ?? []) {
                for (const { table } of family.tables) {
                  const [partition] = yield* onPool(
                    `select p.name, p.detach_pending from (${partitionsOf(identifier(table))}) p where p.upper = ?::timestamptz`, [upper],
                  );
                  if (partition === undefined) continue;
                  const name = identifier(partition.name);
                  // A detach interrupted before (its process stopped) is finished; otherwise detached without blocking the parent's readers and writers.
                  yield* onPool(`alter table ${table} detach partition ${name} ${partition.detach_pending ? "finalize" : "concurrently"}`);
                  yield* onPool(`drop table ${name}`);
                }
                dropped++;
              }
              // A mark bounds only rows before its partition: past the retention, those are gone.
              const marked = family.tables.filter((table) => table.idMarks === true).map(({ table }) => `'${identifier(table)}'`);
              if (marked.length > 0) yield* onPool(`delete from history_id_marks where table_name in (${marked.join(", ")}) and partition_from < ${cutoff}`);
              return dropped;
            }),
            // It wrote nothing: ending its transaction lets the lock go.
            (lock) => driverCall(() => lock.rollback()),
          ),
      };
      return HistoryPartitions.of({
        ...steps,
        forgetExpired: Effect.fnUntraced(function* (family: HistoryFamily, retentionMs: number, batchSize: number) {
          let settled = 0;
          if (family.pendingDeliveries === true) {
            for (let batch = 0; batch < SETTLE_BATCHES_PER_TURN; batch++) {
              const ended = yield* steps.settleExpiring(retentionMs, batchSize);
              settled += ended;
              if (ended < batchSize) break;
            }
          }
          return { settled, dropped: yield* steps.dropExpired(family, retentionMs) };
        }),
      });
    }),
  );
}
