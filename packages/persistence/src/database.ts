import { Migrator } from "@mikro-orm/migrations";
import { MikroORM } from "@mikro-orm/postgresql";
import { Context, Effect, Layer } from "effect";
import { allEntities } from "./entities/index.ts";
import { migrationsList } from "./migrations/index.ts";
import { PostgresNamingStrategy } from "./naming.ts";
import {
  type DatabaseConnection, driverCall, type DatabaseLimits, openReadReplicas, poolOptions, poolRows, type ReadStats, type ReplicaCondition,
  retryWhileUnavailable, startLocalPostgres, waitForDatabase, watchSilence,
} from "@platter/postgres";
import { type DatabaseUnavailable, makeSecretCipher, type SecretCipher, type SecretKey, SecretUnreadable } from "@platter/domain";
import { inStatementSpan } from "./statement-spans.ts";
import { checkKeysAndSealClearSecrets, localSecretKeys, resealInBatches, type SealedCounts, type StatementRunner } from "./stored-secrets.ts";
import { DELIVERIES_NOTIFY, deliveryWaker } from "./webhooks/delivery-listener.ts";

export type { DatabaseConnection, DatabaseLimits } from "@platter/postgres";

/**
 * The database: one MikroORM (its pool, its schema model, its migrations) per process. Every other
 * storage service is built on it; organization data is reached only through `OrgSql`.
 */

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
  /**
   * The keys stored secrets are sealed with (the first seals). Required with a `url`; without one
   * (the embedded server) the key file beside its data is used, made on first start, when this is undefined.
   */
  readonly secretKeys: ReadonlyArray<SecretKey> | undefined;
  /** Told when the embedded server's data directory was created empty by this call. */
  readonly onCreated?: (dataDir: string) => void;
  /** Told why each try failed while a configured server does not answer at start. */
  readonly onWaiting?: (address: string, reason: string) => void;
  /** A span per statement (`inStatementSpan`): only when the process exports traces (OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly statementSpans?: boolean;
  /** Told each time a replica leaves the reads (lagging, unavailable, not a standby) or comes back (current). */
  readonly onReplica?: (name: string, condition: ReplicaCondition, lagMs: number | undefined) => void;
}

/**
 * Connects to PostgreSQL at `url`. Call `orm.close()` to release the pool. With `limits`, getting
 * a connection waits at most `connectTimeoutMs`, and a statement runs at most `statementTimeoutMs`
 * (the server's `statement_timeout`); a server that does not answer at all is given up one second
 * later (`watchSilence`). Without them (migrations) nothing is cut short.
 */
export const openOrm = (
  url: string, poolSize: number, limits?: Omit<DatabaseLimits, "startTimeoutMs"> & Pick<DatabaseConnection, "genericPlans">,
  pooler: DatabaseConnection["pooler"] = "none",
): Promise<MikroORM> =>
  MikroORM.init({
    entities: allEntities,
    namingStrategy: PostgresNamingStrategy,
    clientUrl: url,
    extensions: [Migrator],
    migrations: { migrationsList, silent: true, transactional: true, allOrNothing: true, snapshot: false },
    pool: { min: 0, max: poolSize },
    ...(limits === undefined ? {} : { driverOptions: poolOptions(limits, pooler) }),
    // Timestamps are read as UTC strings in SQL; keep the driver from shifting anything.
    forceUtcTimezone: true,
    debug: false,
    allowGlobalContext: false,
  });

/**
 * `openOrm`, connected: its first connection made (MikroORM connects on first use and checks the
 * database exists then). A failed first connection closes the ORM, to be opened afresh.
 */
const openConnectedOrm = async (...args: Parameters<typeof openOrm>): Promise<MikroORM> => {
  const orm = await openOrm(...args);
  try {
    await orm.em.getConnection().getNativeClient();
    return orm;
  } catch (error) {
    await orm.close(true).catch(() => {});
    throw error;
  }
};

/** The lock migrations (and the start's check of the keys and sealing of stored secrets) take turns on. */
const MIGRATION_LOCK = 7270012;

/**
 * Applies every pending migration; safe to run at every start and from several processes at once.
 * With a `cipher`, then, under the same lock, refuses a keyring that is not the one the stored
 * secrets were sealed with (a different key under a known key id, even on an empty database), writes
 * each new key id's check value, and seals every secret still stored in clear (a database from
 * before sealing): `checkKeysAndSealClearSecrets`.
 */
export const migrateOrm = async (orm: MikroORM, cipher?: SecretCipher): Promise<SealedCounts | undefined> =>
  // Serialise concurrent starts (API, dispatcher, CLI): the lock is held until this transaction ends.
  orm.em.fork().transactional(async (em) => {
    await em.execute(`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await orm.migrator.up();
    return cipher === undefined ? undefined : checkKeysAndSealClearSecrets(statementRunner(em), cipher);
  });

/** Statements in `em`'s transaction. */
const statementRunner = (em: { execute: (text: string, params: unknown[]) => Promise<unknown> }): StatementRunner =>
  async <Row>(text: string, params: ReadonlyArray<unknown>) => (await em.execute(text, [...params])) as Row[];

/**
 * Re-seals every stored secret with the cipher's current key (and seals any in clear), in batches
 * of `SEALING_BATCH` rows, each its own short transaction: `platter secrets reencrypt`, after a new
 * key was put first. Nothing waits on all of it; stopped half-way, every value still opens and a
 * second run finishes it.
 */
export const resealStoredSecrets = (orm: MikroORM, cipher: SecretCipher): Promise<SealedCounts> =>
  resealInBatches((work) => orm.em.fork().transactional((em) => work(statementRunner(em))), cipher);

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
    /** Whether each statement runs in a span of its own (the process exports traces): OrgSql's transactions follow it. */
    readonly statementSpans: boolean;
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
    readonly rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>;
    /**
     * Rows of a read-only statement on a replica that is current within the bound, else on the
     * primary (see read-replicas.ts); the primary's `rows` when no replica is configured.
     */
    readonly replicaRows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>;
    /**
     * `rows` with each row as the array of its column values in select-list order (pg's array row
     * mode): no object per row for the driver to build by column name, which costs the hot lists
     * more than mapping the values by position (tools/bench's profile).
     */
    readonly valueRows: <Row extends ReadonlyArray<unknown>>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>;
    /** `replicaRows` with each row as the array of its column values (see `valueRows`). */
    readonly replicaValueRows: <Row extends ReadonlyArray<unknown>>(
      text: string, values?: ReadonlyArray<unknown>,
    ) => Effect.Effect<Row[], DatabaseUnavailable>;
    /** Where the reads that could go to a replica went, and each replica's condition (metrics). */
    readonly readStats: () => ReadStats | undefined;
    /** Succeeds when the database answers a trivial query. */
    readonly ping: Effect.Effect<void, DatabaseUnavailable>;
    /** Wakes the dispatchers for deliveries that have committed: a coalesced NOTIFY on the pool (`deliveryWaker`). */
    readonly wakeDispatchers: () => void;
    /** The pool right now: connections open, idle, and callers waiting for one. */
    readonly poolStats: () => PoolStats;
    /** Seals the secrets stores write and opens those they read (`SecretCipher`). */
    readonly secrets: SecretCipher;
  }
>()("platter/persistence/Database") {
  /** Opens the database (starting the embedded one when no URL is given), migrates when asked, closes on release. */
  static readonly layer = (options: DatabaseOptions) =>
    Layer.effect(
      Database,
      Effect.gen(function* () {
        // Before anything waits on the server: a configured database without keys is refused at once.
        const secrets = makeSecretCipher(
          options.secretKeys ??
            (options.url === undefined
              ? (yield* Effect.promise(() => localSecretKeys(options.dataDir))).keys
              : yield* Effect.die(new SecretKeysMissing())),
        );
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
        // Containers often start before their database: wait for it, and for each pool's first
        // connection, within one bound.
        const startDeadline = Date.now() + options.startTimeoutMs;
        if (options.url !== undefined) {
          const address = new URL(url).host;
          yield* Effect.tryPromise({
            try: () =>
              waitForDatabase(url, options.startTimeoutMs, options.connectTimeoutMs, (reason) => options.onWaiting?.(address, reason)),
            catch: (error) => error,
          }).pipe(Effect.orDie);
        }
        // Migrations may rightly run longer than a statement may: they get a pool of their own, without
        // limits (two connections: the lock's transaction and the migrator's). Secrets in clear are
        // sealed then, and a keyring that cannot open the sealed ones stops the start here.
        if (options.migrate) {
          yield* Effect.promise(() =>
            retryWhileUnavailable(startDeadline, async () => {
              const orm = await openOrm(url, 2);
              try {
                return await migrateOrm(orm, secrets);
              } finally {
                await orm.close(true);
              }
            }));
        }
        const orm = yield* Effect.acquireRelease(
          Effect.promise(() => retryWhileUnavailable(startDeadline, () => openConnectedOrm(url, options.poolSize, options, options.pooler))),
          (orm) => Effect.promise(() => orm.close(true)),
        );
        const pool = yield* Effect.promise(() => orm.em.getConnection().getNativeClient());
        yield* Effect.acquireRelease(Effect.sync(() => watchSilence(pool, options.statementTimeoutMs + 1_000)), (stop) => Effect.sync(stop));
        const named = (options.preparedStatements ?? (options.pooler === "transaction" ? "unnamed" : "named")) === "named";
        const queryOf = (text: string, values: ReadonlyArray<unknown>, rowMode?: "array") => {
          const statement = prepared(text);
          const name = named ? statement.name : undefined;
          const query = rowMode === undefined ? { name, text: statement.text, values } : { name, text: statement.text, values, rowMode };
          return query as unknown as { text: string; values: unknown[] };
        };
        const statementSpans = options.statementSpans === true;
        // Without tracing, a statement is the driver's call and nothing more.
        const rows = statementSpans
          ? <Row>(text: string, values: ReadonlyArray<unknown> = []) => inStatementSpan(poolRows<Row>(pool, queryOf(text, values)), text)
          : <Row>(text: string, values: ReadonlyArray<unknown> = []) => poolRows<Row>(pool, queryOf(text, values));
        const valueRows = statementSpans
          ? <Row extends ReadonlyArray<unknown>>(text: string, values: ReadonlyArray<unknown> = []) =>
            inStatementSpan(poolRows<Row>(pool, queryOf(text, values, "array")), text)
          : <Row extends ReadonlyArray<unknown>>(text: string, values: ReadonlyArray<unknown> = []) => poolRows<Row>(pool, queryOf(text, values, "array"));
        const replicas = options.replicas === undefined || options.replicas.urls.length === 0
          ? undefined
          : yield* Effect.acquireRelease(
            Effect.sync(() => openReadReplicas(pool, options.replicas!, options.poolSize, options.onReplica)),
            (replicas) => Effect.promise(replicas.close),
          );
        const traced = <A, E>(statement: Effect.Effect<A, E>, text: string) => (statementSpans ? inStatementSpan(statement, text) : statement);
        const replicaRows = replicas === undefined
          ? rows
          : <Row>(text: string, values: ReadonlyArray<unknown> = []) => traced(driverCall(() => replicas.rows<Row>(queryOf(text, values))), text);
        const replicaValueRows = replicas === undefined
          ? valueRows
          : <Row extends ReadonlyArray<unknown>>(text: string, values: ReadonlyArray<unknown> = []) =>
            traced(driverCall(() => replicas.rows<Row>(queryOf(text, values, "array"))), text);
        const poolStats = () => ({ open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
        const listenUrl = options.listenUrl ?? (options.pooler === "transaction" ? undefined : url);
        return Database.of({
          orm, statementSpans, url, listenUrl, rows, replicaRows, valueRows, replicaValueRows, readStats: () => replicas?.stats(), ping: Effect.asVoid(rows("select 1")), poolStats,
          wakeDispatchers: deliveryWaker(() => pool.query(DELIVERIES_NOTIFY)), secrets,
        });
      }),
    );
}

/** A configured database and no `SECRET_ENCRYPTION_KEYS`: a process stops at start, saying so. */
export class SecretKeysMissing extends Error {
  override readonly name = "SecretKeysMissing";
  constructor() {
    super(
      "SECRET_ENCRYPTION_KEYS is not set: with DATABASE_URL, signing secrets are sealed with keys the operator gives " +
        "(<id>:<base64 of 32 bytes>, such as `openssl rand -base64 32` prints; see docs/operations.md, Secrets at rest)",
    );
  }
}

/** Whether a start failed on the stored secrets' keys (missing, or not the ones they were sealed with): a message of its own, no stack. */
export const isSecretKeyRefusal = (error: unknown): error is Error => error instanceof SecretKeysMissing || error instanceof SecretUnreadable;

/** A process's connection pool at one moment. */
export interface PoolStats {
  readonly open: number;
  readonly idle: number;
  readonly waiting: number;
}

/** The platform's pool right now (metrics). */
export const databasePoolStats: Effect.Effect<PoolStats, never, Database> = Database.use((database) => Effect.sync(database.poolStats));

/** Where this process's replica-eligible reads went; undefined without replicas (metrics). */
export const databaseReadStats: Effect.Effect<ReadStats | undefined, never, Database> = Database.use((database) => Effect.sync(database.readStats));

/** Succeeds when the platform's database answers (readiness probes). */
export const pingDatabase: Effect.Effect<void, DatabaseUnavailable, Database> = Database.use((database) => database.ping);
