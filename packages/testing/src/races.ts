import type { TestDatabase } from "./test-database.ts";

/** The advisory lock key `raceThroughHeldInserts` holds; no code under test takes it. */
const HELD_INSERTS_LOCK = 16016;

/**
 * Starts every racer at once while each insert into `table` (or each insert and update, `on`)
 * first waits for a lock this helper holds, and releases it only when `waiters` backends are
 * waiting (by default the test pool's five connections): so each racer has done whatever it does
 * before its write (a count, a check) while the others are still to write. The way to show that a
 * check-then-write rule holds under concurrency (one of many creates takes the last place, one of
 * many edits the one free URL). The trigger is removed afterwards.
 */
export const raceThroughHeldInserts = async <A>(
  db: Pick<TestDatabase, "rawClient">, table: string, racers: ReadonlyArray<() => Promise<A>>,
  { waiters = 5, on = "insert" }: { readonly waiters?: number; readonly on?: "insert" | "insert or update" } = {},
): Promise<A[]> => {
  const blocker = await db.rawClient();
  const hold = `hold_inserts_${table}`;
  try {
    await blocker.query(`create function ${hold}() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(${HELD_INSERTS_LOCK}); return new; end $$`);
    await blocker.query(`create trigger ${hold} before ${on} on ${table} for each row execute function ${hold}()`);
    await blocker.query("select pg_advisory_lock($1)", [HELD_INSERTS_LOCK]);
    const racing = Promise.all(racers.map((race) => race()));
    const waiting = async () =>
      (await blocker.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and state = 'active'",
      )).rows[0]!.n;
    for (let tries = 0; (await waiting()) < waiters; tries++) {
      if (tries === 3_000) throw new Error(`raceThroughHeldInserts: ${waiters} inserts into ${table} never waited together within a minute`);
      await new Promise((done) => setTimeout(done, 20));
    }
    await blocker.query("select pg_advisory_unlock($1)", [HELD_INSERTS_LOCK]);
    return await racing;
  } finally {
    await blocker.query("select pg_advisory_unlock_all()");
    await blocker.query(`drop trigger if exists ${hold} on ${table}`);
    await blocker.query(`drop function if exists ${hold}()`);
    await blocker.end();
  }
};
