import { DatabaseUnavailable } from "@platter/domain";
import { Effect } from "effect";
import pg from "pg";
import { ServerSilent } from "./silence-watchdog.ts";

/**
 * Telling "the database is not there right now" from everything else. An outage (stopped, frozen,
 * restarting, out of connections, too slow) is expected on a shared service: the driver fails with
 * the domain's `DatabaseUnavailable` (`statementFailure`), callers answer it with 503 and wait for it
 * to pass. Anything else that fails in storage stays a defect.
 */

/** Node's socket-level error codes: the server is not reachable. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND"]);
/**
 * SQLSTATEs of a server going away (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect
 * now), full (53300 too many connections), or cancelling a statement that ran past `statement_timeout`
 * (57014: a frozen or overloaded server shows so); class 08 (connection exception) is matched as a class.
 */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "53300", "57014"]);
/**
 * node-postgres and pg-pool fail a connection that died or never came with a plain `Error` and no
 * code, so their words are all there is to read: "Connection terminated (unexpectedly | due to
 * connection timeout)", "timeout exceeded when trying to connect" (the pool's acquire timeout),
 * "Query read timeout", "Client … is not queryable", and "Cannot use a pool after calling end on the pool".
 */
const DRIVER_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client (has encountered a connection error|was closed) and is not queryable|Cannot use a pool after calling end on the pool|Connection ended)/;

/** Whether `error` itself is PostgreSQL finding no partition for a row (23514, "no partition of relation … found for row"). */
export const isMissingPartition = (error: object): boolean => {
  const { code, sqlState, message } = error as { code?: unknown; sqlState?: unknown; message?: unknown };
  return (code === "23514" || sqlState === "23514") && typeof message === "string" && message.includes("no partition of relation");
};

/** What a failure of the driver says about the database. */
export type DatabaseFailureKind =
  /** The database is not there right now (down, frozen, restarting, full, too slow): wait for it, answer 503. */
  | "unavailable"
  /** PostgreSQL refused the statement's data (SQLSTATE class 22 or 23): about some rows only. */
  | "data refusal"
  /** Anything else: a defect. */
  | "defect";

const ownKind = (error: object): DatabaseFailureKind | undefined => {
  // Already typed (a program run to a rejected promise by `Effect.runPromise`), or our watchdog's own.
  if (error instanceof DatabaseUnavailable || error instanceof ServerSilent) return "unavailable";
  const { code, sqlState } = error as { code?: unknown; sqlState?: unknown };
  // pg's `DatabaseError` carries the SQLSTATE in `code`, MikroORM's exceptions in `sqlState`, Node's system errors their errno name in `code`.
  const state = typeof code === "string" ? code : typeof sqlState === "string" ? sqlState : "";
  if (NETWORK_CODES.has(state) || UNAVAILABLE_STATES.has(state) || /^08[0-9A-Z]{3}$/.test(state)) return "unavailable";
  // A row of a time-partitioned history table no partition takes (none made ahead: `HistoryPartitions`):
  // the storage is not ready for it, as in an outage; never a 500.
  if (isMissingPartition(error)) return "unavailable";
  if (/^2[23][0-9A-Z]{3}$/.test(state)) return "data refusal";
  // Only pg's plain errors without a code are read by their words (see DRIVER_MESSAGES).
  if (state === "" && error instanceof Error && DRIVER_MESSAGES.test(error.message)) return "unavailable";
  return undefined;
};

/**
 * The one classification of a driver's failure: the kind of `error` or of the first thing it wraps
 * (`cause`, MikroORM's `previous`, an `AggregateError`'s `errors`, a few levels deep) that has one.
 * An outage anywhere in the chain wins over a refusal.
 */
export const databaseFailureKind = (error: unknown): DatabaseFailureKind => {
  let refusal = false;
  const visit = (inner: unknown, depth: number): boolean => {
    if (typeof inner !== "object" || inner === null || depth > 5) return false;
    const kind = ownKind(inner);
    if (kind === "unavailable") return true;
    if (kind === "data refusal") refusal = true;
    const wrapped = inner as { cause?: unknown; previous?: unknown; errors?: unknown };
    return [wrapped.cause, wrapped.previous, ...(Array.isArray(wrapped.errors) ? wrapped.errors : [])].some((next) => visit(next, depth + 1));
  };
  return visit(error, 0) ? "unavailable" : refusal ? "data refusal" : "defect";
};

/** Whether `error` or anything it wraps (`cause`, `previous`, a few levels deep) is a row no history partition takes (`isMissingPartition`). */
export const hasMissingPartition = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 5) return false;
  if (isMissingPartition(error)) return true;
  const wrapped = error as { cause?: unknown; previous?: unknown; reason?: unknown };
  return [wrapped.cause, wrapped.previous, wrapped.reason].some((next) => hasMissingPartition(next, depth + 1));
};

/** Whether `error` (or anything it wraps) says the database is unavailable rather than that something is wrong. */
export const isDatabaseUnavailable = (error: unknown): boolean => databaseFailureKind(error) === "unavailable";

/**
 * A statement's failure as the driver reports it: the domain's `DatabaseUnavailable` in the error
 * channel for an outage (`databaseFailureKind`), a defect for anything else.
 */
export const statementFailure = (error: unknown): Effect.Effect<never, DatabaseUnavailable> =>
  isDatabaseUnavailable(error) ? Effect.fail(new DatabaseUnavailable({ reason: error })) : Effect.die(error);

/** A call into the driver (or the ORM over it) as an effect whose outage is a typed `DatabaseUnavailable`. */
export const driverCall = <A>(call: () => Promise<A>): Effect.Effect<A, DatabaseUnavailable> =>
  Effect.callback<A, DatabaseUnavailable>((resume) => {
    call().then((value) => resume(Effect.succeed(value)), (error: unknown) => resume(statementFailure(error)));
  });

/** `orDieButOutage` is the domain's (errors.ts), next to `DatabaseUnavailable`: the application uses it too. */
export { orDieButOutage } from "@platter/domain";

/**
 * The rows of one statement on `pool`, through pg's callback: no promise and no async function
 * per statement, the API's hottest path. An outage fails with `DatabaseUnavailable`, anything else is a defect.
 */
export const poolRows = <Row>(pool: pg.Pool, query: pg.QueryConfig): Effect.Effect<Row[], DatabaseUnavailable> =>
  Effect.callback<Row[], DatabaseUnavailable>((resume) => {
    pool.query(query, (error: Error | undefined, result: pg.QueryResult) =>
      resume(error ? statementFailure(error) : Effect.succeed(result.rows as Row[])));
  });

/**
 * Whether `error` (or anything it wraps) is PostgreSQL refusing the statement's data: SQLSTATE class
 * 22 (data exception: a bad encoding, a value out of range) or 23 (integrity constraint). Such a
 * refusal is about some rows, so a batch may be split to keep the others; disk full, out of memory
 * or a deadlock is not, and splitting would only add statements while the server is under pressure.
 */
export const isDataRefusal = (error: unknown): boolean => databaseFailureKind(error) === "data refusal";

/** The database did not answer within the start timeout, or refused us for a reason waiting will not fix. */
export class DatabaseUnreachable extends Error {
  /** `host:port` from the URL (never its password). */
  readonly address: string;
  constructor(address: string, reason: string) {
    super(`cannot reach the database at ${address}: ${reason}; check DATABASE_URL and that the server runs there`);
    this.name = "DatabaseUnreachable";
    this.address = address;
  }
}

const describe = (error: unknown): string => {
  const e = error as { code?: string; message?: string; errors?: Array<{ code?: string; message?: string }> };
  const first = e.errors?.[0] ?? e;
  return [first.code, first.message].filter((part) => part !== undefined && part !== "").join(": ") || String(error);
};

const addressOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "5432"}`;
};

/**
 * Waits until the database at `url` answers `select 1`, trying every second for up to `timeoutMs`
 * (each try bounded by `connectTimeoutMs`) and telling `onWaiting` why after each failed try. An
 * outage is waited out; a refusal waiting cannot fix (a wrong password, a database that does not
 * exist) fails at once. Fails with `DatabaseUnreachable`.
 */
export const waitForDatabase = async (
  url: string,
  timeoutMs: number,
  connectTimeoutMs: number,
  onWaiting: (reason: string) => void,
): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: connectTimeoutMs });
    client.on("error", () => {}); // a connection dropped while we look is just a failed try
    try {
      await client.connect();
      await client.query("select 1");
      return;
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw new DatabaseUnreachable(addressOf(url), describe(error));
      if (Date.now() >= deadline) {
        throw new DatabaseUnreachable(addressOf(url), `${describe(error)}, still after ${Math.round(timeoutMs / 1000)} s`);
      }
      onWaiting(describe(error));
      await new Promise((done) => setTimeout(done, Math.min(1000, Math.max(0, deadline - Date.now()))));
    } finally {
      await client.end().catch(() => {});
    }
  }
};

/**
 * Runs `open` (a start's first connection of a pool), trying again each second while it fails
 * because the database is unavailable and `deadline` (epoch ms) has not passed: a server that
 * answered `waitForDatabase` may still refuse or time out the next connection (a restart, a machine
 * too busy to answer within DATABASE_CONNECT_TIMEOUT). Any other failure, or one past the deadline,
 * is thrown.
 */
export const retryWhileUnavailable = async <A>(deadline: number, open: () => Promise<A>): Promise<A> => {
  for (;;) {
    try {
      return await open();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() >= deadline) throw error;
      await new Promise((done) => setTimeout(done, Math.min(1000, Math.max(0, deadline - Date.now()))));
    }
  }
};
