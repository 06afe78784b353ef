import { userInfo } from "node:os";
import { isPlatterError, type OperatorActor, operatorActor } from "@platter/domain";
import { type DatabaseSettings } from "@platter/ops";
import { openPlatform, type Persistence, type PlatformRuntime, requestOutcome } from "@platter/persistence";
import { Operator, type OwnedRecord } from "@platter/persistence/operator";
import { Effect } from "effect";
import { failureOf } from "./failures.ts";
import { note } from "./output.ts";

/**
 * The database a command works on: `DATABASE_URL`, else the local embedded server (joined when
 * `npm start` or another command already runs it, started and afterwards stopped otherwise).
 */

/** Opens the platform for one command (a small pool, migrations applied), runs `work`, closes all it opened. */
export const withPlatform = async <T>(config: DatabaseSettings, work: (platform: PlatformRuntime) => Promise<T>): Promise<T> => {
  // PLATTER_DATA_DIR is relative to where the command runs: say so when that made an empty database.
  const platform = await openPlatform({ ...config, poolSize: 4 }, {
    onCreated: (dataDir) => note(`platter: created a new local database in ${dataDir}`),
    onWaiting: (address, reason) => note(`platter: waiting for the database at ${address} (${reason})`),
  });
  try {
    return await work(platform);
  } finally {
    await platform.dispose();
  }
};

/**
 * Runs one command's storage program. What its Cause holds is read as the request edges read it
 * (`requestOutcome`): an expected failure (a database outage too, as `DatabaseUnavailable`) ends
 * the command with the catalogue's line and exit code (`failureOf`; `notFound` says what was
 * missing), a defect is thrown as it is.
 */
export const runAction = async <A, E>(platform: PlatformRuntime, program: Effect.Effect<A, E, Persistence>, notFound: string): Promise<A> => {
  const exit = await platform.runPromiseExit(program);
  try {
    return requestOutcome(exit);
  } catch (thrown) {
    throw isPlatterError(thrown) ? failureOf(thrown, notFound) : thrown;
  }
};

/**
 * Who the audit log says made a command's changes: the operating-system user who ran it (the
 * database's own roles are not people), or `USER` when the system has no entry for the process's uid.
 */
const operatorName = (): string => {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = process.env["USER"];
  }
  return `${user ?? "an unknown user"} via the CLI`;
};

/** The operator acting on organization `id`: the explicit step before acting on its data. */
export const inOrganization = <A, E, R>(id: number, work: (operator: OperatorActor) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Operator.use((operator) => operator.scopeOf(id)), (scope) => work(operatorActor(scope, operatorName())));

/** The operator acting on the organization owning record `id` of `table`. */
export const inOwnerOf = <A, E, R>(table: OwnedRecord, id: number, work: (operator: OperatorActor) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Operator.use((operator) => operator.scopeOfRecord(table, id)), (scope) => work(operatorActor(scope, operatorName())));
