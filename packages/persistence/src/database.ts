import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import { allEntities } from "./entities/index.ts";
import { migrationsList } from "./migrations/index.ts";

/** Database: opening the ORM on a PostgreSQL URL and bringing its schema up to date. */

export type Orm = MikroORM;

export interface OpenOptions {
  /** Connection pool size; the API and the dispatcher each keep their own pool. */
  readonly poolSize?: number;
}

/** Connects to PostgreSQL at `url`. Call `orm.close()` to release the pool. */
export const openOrm = (url: string, options: OpenOptions = {}): Promise<Orm> =>
  MikroORM.init({
    entities: allEntities,
    clientUrl: url,
    extensions: [Migrator],
    migrations: { migrationsList, silent: true, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: options.poolSize ?? 10 },
    // Timestamps are read as UTC strings in SQL; keep the driver from shifting anything.
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  });

/** Applies every pending migration; safe to run at every start and from several processes. */
export const migrate = async (orm: Orm): Promise<void> => {
  // Serialise concurrent starts (API, dispatcher, CLI): the lock is held until this transaction ends.
  await orm.em.fork().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(7270012)");
    await orm.migrator.up();
  });
};
