import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate, openOrm, type Orm } from "../database.ts";

/** A fresh, migrated database of its own for one test file, so files run in parallel without sharing state. */
export interface TestDatabase {
  readonly url: string;
  readonly orm: Orm;
  /** Closes the pool and drops the database. */
  readonly dispose: () => Promise<void>;
}

const withAdmin = async (adminUrl: string, statement: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
};

/** Creates database `t_<random>` on the test server and applies every migration. */
export const createTestDatabase = async (adminUrl: string): Promise<TestDatabase> => {
  const name = `t_${randomBytes(6).toString("hex")}`;
  await withAdmin(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const orm = await openOrm(url.toString(), { poolSize: 5 });
  await migrate(orm);
  return {
    url: url.toString(),
    orm,
    dispose: async () => {
      await orm.close(true);
      await withAdmin(adminUrl, `drop database if exists ${name} with (force)`);
    },
  };
};
