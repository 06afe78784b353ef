import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import type { Socket } from "node:net";
import type pg from "pg";
import { Context, Effect, Layer } from "effect";
import { allEntities } from "./entities/index.ts";
import { waitForDatabase } from "./database-availability.ts";
import { startLocalPostgres } from "./local-postgres.ts";
import { migrationsList } from "./migrations/index.ts";
import { PostgresNamingStrategy } from "./naming.ts";

/**
 * The database: one MikroORM (its pool, its schema model, its migrations) per process. Every other
 * storage service is built on it; organization data is reached only through `OrgSql`.
 */

/** How long to wait on the database: every wait is bounded. */
export interface DatabaseLimits {
  /** To open a connection, or to get one from the pool. */
  readonly connectTimeoutMs: number;
  /** For one statement: the server cancels it then, and the client stops waiting shortly after. */
  readonly statementTimeoutMs: number;
  /** For a configured server to answer at start, tried every second. */
  readonly startTimeoutMs: number;
}

/**
 * How to talk to the server behind the URL. Behind a pooler in transaction mode (PgBouncer's
 * `pool_mode = transaction`) consecutive transactions of one client connection may run on
 * different server connections: a named prepared statement is then unknown (or already there) on
 * the next, a session's LISTEN hears nothing, and PgBouncer refuses startup parameters it does not
 * know, such as `statement_timeout` (set it on the role instead).
 */
export interface DatabaseConnection {
  /** `transaction`: the URL is a transaction-mode pooler (default `none`). */
  readonly pooler?: "none" | "transaction";
  /** `unnamed`: no statement is prepared under a name (default `named`, `unnamed` behind a transaction pooler). */
  readonly preparedStatements?: "named" | "unnamed";
  /** Where LISTEN connects: PostgreSQL itself when the URL is a transaction pooler (see `Database.listenUrl`). */
  readonly listenUrl?: string | undefined;
}

/** Where the database is and how to open it. */
export interface DatabaseOptions extends DatabaseLimits, DatabaseConnection {
  /** PostgreSQL URL; without one the embedded local server under `dataDir` is started (or joined). */
  readonly url: string | undefined;
  readonly dataDir: string;
  readonly localPort: number;
  /** Connections in this process's pool. */
  readonly poolSize: number;
  /** Apply pending migrations before anything uses the database. */
  readonly migrate: boolean;
  /** Told when the embedded server's data directory was created empty by this call. */
  readonly onCreated?: (dataDir: string) => void;
  /** Told why each try failed while a configured server does not answer at start. */
  readonly onWaiting?: (address: string, reason: string) => void;
}

/**
 * Connects to PostgreSQL at `url`. Call `orm.close()` to release the pool. With `limits`, getting
 * a connection waits at most `connectTimeoutMs`, and a statement runs at most `statementTimeoutMs`
 * (the server's `statement_timeout`); a server that does not answer at all is given up one second
 * later (`watchSilence`). Without them (migrations) nothing is cut short.
 */
export const openOrm = (
  url: string, poolSize: number, limits?: Omit<DatabaseLimits, "startTimeoutMs">, pooler: DatabaseConnection["pooler"] = "none",
): Promise<MikroORM> =>
  MikroORM.init({
    entities: allEntities,
    namingStrategy: PostgresNamingStrategy,
    clientUrl: url,
    extensions: [Migrator],
    migrations: { migrationsList, silent: true, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: poolSize },
    ...(limits === undefined
      ? {}
      : {
        driverOptions: {
          connectionTimeoutMillis: limits.connectTimeoutMs,
          // A transaction pooler refuses it as a startup parameter: the role's setting applies there.
          ...(pooler === "transaction" ? {} : { statement_timeout: limits.statementTimeoutMs }),
        },
      }),
    // Timestamps are read as UTC strings in SQL; keep the driver from shifting anything.
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  });

/** How long a dead connection may stay checked out before the watchdog hands it back to the pool itself. */
const DEAD_CONNECTION_GRACE_MS = 1_000;

/**
 * Gives up on a checked-out connection whose server has sent nothing for `silenceMs` (a frozen or
 * vanished server; a live one answers or cancels within `statement_timeout`): its socket is
 * destroyed, so whatever waits on it fails at once with "Query read timeout", an outage. One
 * interval for the pool and nothing per statement: node-postgres's own `query_timeout` arms a timer
 * per statement, and the garbage that left cost about a fifth of a list request's CPU (an A/B of
 * tools/bench on this machine, 2026-11-23: 1,394 µs per request with it, 1,111 without).
 *
 * It also returns to the pool a checked-out connection that has been dead (its socket destroyed,
 * by the watchdog or by the server going away) for `DEAD_CONNECTION_GRACE_MS` without its holder
 * releasing it: Kysely (under MikroORM) releases a transaction's connection only after its
 * `commit`/`rollback` succeeded, so a transaction caught by an outage kept its pool slot forever
 * (seen after a 10 s freeze under load: most of the pool gone until the process restarted, apps/api/test/database-outage.test.ts).
 * Returns the stop.
 */
const watchSilence = (pool: pg.Pool, silenceMs: number): (() => void) => {
  const streamOf = (client: pg.PoolClient) => (client as unknown as { connection: { stream: Socket } }).connection.stream;
  /** Checked-out connections: bytes read when last looked at, since when that count stands, and since when it is dead. */
  const held = new Map<pg.PoolClient, { bytesRead: number; since: number; deadSince?: number }>();
  pool.on("acquire", (client) => void held.set(client, { bytesRead: streamOf(client).bytesRead, since: performance.now() }));
  pool.on("release", (_error: unknown, client: pg.PoolClient) => void held.delete(client));
  pool.on("remove", (client) => void held.delete(client as pg.PoolClient));
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [client, seen] of held) {
      const stream = streamOf(client);
      if (stream.destroyed) {
        seen.deadSince ??= now;
        if (now - seen.deadSince > DEAD_CONNECTION_GRACE_MS) {
          held.delete(client);
          // With an error, the pool drops the connection and opens a new one when needed.
          client.release(new Error("the connection died while checked out and its holder never released it"));
        }
      } else if (stream.bytesRead !== seen.bytesRead) {
        seen.bytesRead = stream.bytesRead;
        seen.since = now;
      } else if (now - seen.since > silenceMs) {
        seen.deadSince = now;
        stream.destroy(new Error(`Query read timeout: the database sent nothing for ${silenceMs} ms`));
      }
    }
  }, Math.min(250, silenceMs / 4));
  timer.unref();
  return () => clearInterval(timer);
};

/** Applies every pending migration; safe to run at every start and from several processes at once. */
export const migrateOrm = async (orm: MikroORM): Promise<void> => {
  // Serialise concurrent starts (API, dispatcher, CLI): the lock is held until this transaction ends.
  await orm.em.fork().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(7270012)");
    await orm.migrator.up();
  });
};

/** A statement as sent to PostgreSQL: `$n` placeholders, and the name it is prepared under. */
interface PreparedStatement {
  readonly text: string;
  readonly name: string | undefined;
}

/** At most this many statement texts are prepared on each connection; any beyond run unnamed. */
const MAX_PREPARED = 500;

/**
 * Each statement text, once: `?` placeholders rewritten to `$1…$n`, and a name under which each
 * connection parses and plans it only the first time it runs it (the texts are constants and a
 * few shapes of them, so the set is small; the cap only guards against a text built from values).
 */
const statements = new Map<string, PreparedStatement>();
const prepared = (text: string): PreparedStatement => {
  let statement = statements.get(text);
  if (statement === undefined) {
    let position = 0;
    const numbered = text.replace(/\?/g, () => `$${++position}`);
    statement = { text: numbered, name: statements.size < MAX_PREPARED ? `platter_${statements.size}` : undefined };
    if (statement.name !== undefined) statements.set(text, statement);
  }
  return statement;
};

export class Database extends Context.Service<
  Database,
  {
    /** The ORM: entities, transactions, writes. Only persistence's own modules use it. */
    readonly orm: MikroORM;
    /** The URL connected to (the embedded server's when none was configured). */
    readonly url: string;
    /**
     * Where a LISTEN connection goes: `DatabaseConnection.listenUrl`, else `url` itself unless that
     * is a transaction pooler, where a LISTEN would hear nothing (then undefined: poll instead).
     */
    readonly listenUrl: string | undefined;
    /**
     * Rows of one statement on the pool, with bound `?` parameters, as a prepared statement: each
     * connection parses and plans a text once. Skips MikroORM's `execute` layers (parameter
     * inlining, Kysely's executor): tools/bench measured about a quarter less API CPU per list
     * request. Same pool, same type parsers.
     */
    readonly rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[]>;
    /** Succeeds when the database answers a trivial query. */
    readonly ping: Effect.Effect<void>;
    /** The pool right now: connections open, idle, and callers waiting for one. */
    readonly poolStats: () => PoolStats;
  }
>()("platter/persistence/Database") {
  /** Opens the database (starting the embedded one when no URL is given), migrates when asked, closes on release. */
  static readonly layer = (options: DatabaseOptions) =>
    Layer.effect(
      Database,
      Effect.gen(function* () {
        const url =
          options.url ??
          (yield* Effect.acquireRelease(
            Effect.promise(async () => {
              const local = await startLocalPostgres(options.dataDir, options.localPort);
              if (local.created) options.onCreated?.(local.dataDir);
              return local;
            }),
            (local) => Effect.promise(() => local.release()),
          )).url;
        if (options.url !== undefined) {
          // Containers often start before their database: wait for it, within a bound.
          const address = new URL(url).host;
          yield* Effect.tryPromise({
            try: () =>
              waitForDatabase(url, options.startTimeoutMs, options.connectTimeoutMs, (reason) => options.onWaiting?.(address, reason)),
            catch: (error) => error,
          }).pipe(Effect.orDie);
        }
        // Migrations may rightly run longer than a statement may: they get a pool of their own, without
        // limits (two connections: the lock's transaction and the migrator's).
        if (options.migrate) {
          yield* Effect.acquireUseRelease(
            Effect.promise(() => openOrm(url, 2)),
            (orm) => Effect.promise(() => migrateOrm(orm)),
            (orm) => Effect.promise(() => orm.close(true)),
          );
        }
        const orm = yield* Effect.acquireRelease(
          Effect.promise(() => openOrm(url, options.poolSize, options, options.pooler)),
          (orm) => Effect.promise(() => orm.close(true)),
        );
        const pool = yield* Effect.promise(() => orm.em.getConnection().getNativeClient());
        yield* Effect.acquireRelease(Effect.sync(() => watchSilence(pool, options.statementTimeoutMs + 1_000)), (stop) => Effect.sync(stop));
        const named = (options.preparedStatements ?? (options.pooler === "transaction" ? "unnamed" : "named")) === "named";
        const rows = <Row>(text: string, values: ReadonlyArray<unknown> = []) =>
          Effect.promise(async () => {
            const statement = prepared(text);
            const query = statement.name === undefined || !named ? { text: statement.text, values } : { ...statement, values };
            return (await pool.query(query as { text: string; values: unknown[] })).rows as Row[];
          });
        const poolStats = () => ({ open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
        const listenUrl = options.listenUrl ?? (options.pooler === "transaction" ? undefined : url);
        return Database.of({ orm, url, listenUrl, rows, ping: Effect.asVoid(rows("select 1")), poolStats });
      }),
    );
}

/** A process's connection pool at one moment. */
export interface PoolStats {
  readonly open: number;
  readonly idle: number;
  readonly waiting: number;
}

/** The platform's pool right now (metrics). */
export const databasePoolStats: Effect.Effect<PoolStats, never, Database> = Database.use((database) => Effect.sync(database.poolStats));

/** Succeeds when the platform's database answers (readiness probes). */
export const pingDatabase: Effect.Effect<void, never, Database> = Database.use((database) => database.ping);
