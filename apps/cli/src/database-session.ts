import { migrate, openOrm, type Orm, startLocalPostgres } from "@platter/persistence";
import type { DatabaseSettings } from "@platter/domain";
import { CommandFailed } from "./failures.ts";
import { note } from "./output.ts";

/**
 * The database a command works on: `DATABASE_URL`, else the local embedded server (joined when
 * `npm start` or another command already runs it, started and afterwards stopped otherwise).
 */
export interface PlatformDatabase {
  readonly url: string;
  /** Stops the local server if this process started it; a no-op otherwise. */
  readonly release: () => Promise<void>;
}

export const openPlatformDatabase = async (config: DatabaseSettings): Promise<PlatformDatabase> => {
  if (config.databaseUrl) return { url: config.databaseUrl, release: async () => {} };
  const local = await startLocalPostgres(config.dataDir, config.localPostgresPort);
  // PLATTER_DATA_DIR is relative to where the command runs: say so when that made an empty database.
  if (local.created) note(`platter: created a new local database in ${local.dataDir}`);
  return local;
};

/** Connects to `url`, brings the schema up to date, runs `work`, then closes the pool. */
export const withMigratedOrm = async <T>(url: string, work: (orm: Orm) => Promise<T>): Promise<T> => {
  const orm = await openOrm(url, { poolSize: 4 });
  try {
    await migrate(orm);
    return await work(orm);
  } finally {
    await orm.close(true);
  }
};

/** One command's database session: open (or start) the database, migrate, run `work`, close all it opened. */
export const withDatabase = async <T>(config: DatabaseSettings, work: (orm: Orm) => Promise<T>): Promise<T> => {
  const database = await openPlatformDatabase(config);
  try {
    return await withMigratedOrm(database.url, work);
  } finally {
    await database.release();
  }
};

/** An organization's identity, or `undefined` when there is none with that id. */
export const findOrganization = async (orm: Orm, id: number) => {
  const [row] = await orm.em
    .getConnection()
    .execute<{ id: string; name: string; currency: string }[]>("select id, name, currency from organizations where id = ?", [id]);
  return row === undefined ? undefined : { id: Number(row.id), name: row.name, currency: row.currency };
};

/** The organization with `id`, or a failure naming it: commands on an unknown organization exit 1. */
export const requireOrganization = async (orm: Orm, id: number) => {
  const organization = await findOrganization(orm, id);
  if (organization === undefined) throw new CommandFailed(`organization ${id} does not exist`);
  return organization;
};
