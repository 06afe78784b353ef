import type { EntityManager, EntityName, RequiredEntityData } from "@mikro-orm/postgresql";
import { NotFound, type OrgScope, type DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Exit } from "effect";
import { driverCall } from "@platter/postgres";
import { inStatementSpan } from "./statement-spans.ts";
import { Database } from "./database.ts";

/**
 * Organization SQL: the one way to reach organization data. An `OrgSql` is made from a scope (which
 * only authentication or an explicit operator action can make) and writes the organization filter
 * of every statement itself, so no statement it builds can read, count or change another
 * organization's rows. An outage fails with the domain's `DatabaseUnavailable` (the driver's
 * `driverCall` and `poolRows`); any other storage failure is a defect (an opaque 500).
 */

/** Every table that holds organization data, with the column naming its organization. */
export const ORGANIZATION_TABLES = {
  organizations: "id",
  api_keys: "organization_id",
  clients: "organization_id",
  recipes: "organization_id",
  ingredients: "organization_id",
  events: "organization_id",
  dishes: "organization_id",
  proposals: "organization_id",
  invoices: "organization_id",
  invoice_line_items: "organization_id",
  idempotency_keys: "organization_id",
  webhook_messages: "organization_id",
  webhook_endpoints: "organization_id",
  webhook_deliveries: "organization_id",
  webhook_attempts: "organization_id",
  developer_sign_in_links: "organization_id",
  developer_sessions: "organization_id",
  audit_log: "organization_id",
  api_requests: "organization_id",
  endpoint_notices: "organization_id",
  alert_recipients: "organization_id",
  alert_mails: "organization_id",
} as const;

/** A table of organization data. */
export type OrgTable = keyof typeof ORGANIZATION_TABLES;

/** SQL text with `?` placeholders and their values in text order. */
export interface Statement {
  readonly text: string;
  readonly values: ReadonlyArray<unknown>;
}

const isStatement = (value: unknown): value is Statement =>
  typeof value === "object" && value !== null && Object.hasOwn(value, "text") && Object.hasOwn(value, "values");

/**
 * `sql\`e.id = ${id}\`` → `{ text: "e.id = ?", values: [id] }`: every interpolated value is a bound
 * parameter, except a nested `Statement`, which is spliced in with its own values.
 */
export const sql = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Statement => {
  let text = strings[0]!;
  const bound: unknown[] = [];
  values.forEach((value, index) => {
    if (isStatement(value)) {
      text += value.text;
      bound.push(...value.values);
    } else {
      text += "?";
      bound.push(value);
    }
    text += strings[index + 1]!;
  });
  return { text, values: bound };
};

/** Constant SQL text written in our code (a column list, an order); never caller input. */
export const raw = (text: string): Statement => ({ text, values: [] });

const EMPTY = raw("");

/** The conditions joined with `and`; undefined for none. */
export const allOf = (parts: ReadonlyArray<Statement>): Statement | undefined =>
  parts.reduce<Statement | undefined>((all, part) => (all === undefined ? part : sql`${all} and ${part}`), undefined);

/**
 * A select confined to the scope: `select <columns> from <from> <as> <joins> where <as>.<org> = …
 * [and (<where>)] <rest>`.
 */
export interface Select {
  /** Column expressions; constant text without parameters. */
  readonly columns: string;
  readonly from: OrgTable;
  readonly as: string;
  /** Rows joined to these, each confined to the scope by OrgSql (see `Join`). */
  readonly joins?: ReadonlyArray<Join>;
  readonly where?: Statement;
  /** `order by …`, `limit …`, `group by …`, `for update`. */
  readonly rest?: Statement;
}

/**
 * Rows joined in a `Select`, confined to the scope like the rows they join: a table of
 * organization data (OrgSql adds `<as>.<org> = <the scope's organization>` to `on`), or a `Select`
 * of its own (a derived table, `lateral` when it refers to the rows before it), confined as every
 * select is. `left` keeps the rows before it that find none.
 */
export interface Join {
  readonly to: { readonly table: OrgTable } | { readonly select: Select; readonly lateral?: boolean };
  readonly as: string;
  /** The join's condition besides the organization's; constant text (`true` for none). */
  readonly on: string;
  readonly left?: boolean;
}

/** An update confined to the scope: `update <table> <as> set <set> where <as>.<org> = … and (<where>) returning …`. */
export interface Update {
  readonly table: OrgTable;
  readonly as: string;
  readonly set: Statement;
  readonly where: Statement;
  readonly returning?: string;
}

/** An insert of rows selected from the scope's rows (see `OrgSql.insertFrom`). */
export interface InsertFrom {
  readonly into: OrgTable;
  /** The target columns after the organization; constant text. */
  readonly columns: string;
  /** The select list for `columns`; may bind values. */
  readonly values: Statement;
  readonly from: OrgTable;
  readonly as: string;
  readonly where?: Statement;
}

export interface OrgSql {
  readonly scope: OrgScope;
  /** Whether the process traces (each statement in a span of its own): a message is then written with its trace context. */
  readonly traced: boolean;
  readonly select: <Row>(query: Select) => Effect.Effect<Row[], DatabaseUnavailable>;
  /**
   * Wakes the dispatchers once what was written commits: at the end of the transaction this runs
   * in, or at once outside one (`Database.wakeDispatchers`). For the writer of new deliveries.
   */
  readonly wakeDispatchersOnCommit: Effect.Effect<void>;
  /** The first row, or `NotFound`: a record that does not exist and another organization's look alike. */
  readonly one: <Row>(query: Select) => Effect.Effect<Row, NotFound | DatabaseUnavailable>;
  /**
   * `select` with each row as the array of its column values in select-list order: for reads
   * mapped by position (a list's page), which spares the driver building an object per row.
   */
  readonly selectValues: <Row extends ReadonlyArray<unknown>>(query: Select) => Effect.Effect<Row[], DatabaseUnavailable>;
  /** `one` as the array of its column values (see `selectValues`). */
  readonly oneValues: <Row extends ReadonlyArray<unknown>>(query: Select) => Effect.Effect<Row, NotFound | DatabaseUnavailable>;
  readonly update: <Row>(query: Update) => Effect.Effect<Row[], DatabaseUnavailable>;
  /** Deletes the scope's rows of `table` matching `where`; returns how many. */
  readonly delete: (table: OrgTable, as: string, where: Statement) => Effect.Effect<number, DatabaseUnavailable>;
  /** Inserts one row through its entity with the scope's organization; returns its id. */
  readonly insert: <Row extends object>(
    entity: EntityName<Row>,
    data: Omit<RequiredEntityData<Row>, "organization">,
  ) => Effect.Effect<number, DatabaseUnavailable>;
  /**
   * Rows made from the scope's own rows, owned by the scope's organization:
   * `insert into <into> (<org>, <columns>) select <organization>, <values> from <from> <as> where <org filter> and (<where>)`.
   * Returns how many were inserted.
   */
  readonly insertFrom: (query: InsertFrom) => Effect.Effect<number, DatabaseUnavailable>;
  /**
   * Inserts one row with the scope's organization, `values` for `columns`, and returns its `returning`:
   * for a table whose key the ORM cannot return (a partitioned table's, `(id, created_at)`).
   */
  readonly insertReturning: <Row>(into: OrgTable, columns: string, values: Statement, returning: string) => Effect.Effect<Row[], DatabaseUnavailable>;
  /** Inserts many rows through their entity, each with the scope's organization. */
  readonly insertMany: <Row extends object>(
    entity: EntityName<Row>,
    data: ReadonlyArray<Omit<RequiredEntityData<Row>, "organization">>,
  ) => Effect.Effect<void, DatabaseUnavailable>;
  /**
   * Runs `work` in one transaction on this scope: it commits when `work` succeeds and rolls back
   * when it fails (an expected failure too), so a failed action writes nothing.
   */
  readonly transaction: <A, E>(work: (tx: OrgSql) => Effect.Effect<A, E>) => Effect.Effect<A, E | DatabaseUnavailable>;
  /** A transaction-scoped advisory lock on `name` within this organization; false when another transaction holds it. */
  readonly tryLock: (name: string) => Effect.Effect<boolean, DatabaseUnavailable>;
}

/** How statements run: on the pool (or the fiber's transaction), or on one transaction's connection. */
interface Executor {
  readonly rows: <Row>(statement: Statement) => Effect.Effect<Row[], DatabaseUnavailable>;
  /** A select: on a replica when the fiber reads from one (see `onReplica`), else as `rows`. */
  readonly read: <Row>(statement: Statement) => Effect.Effect<Row[], DatabaseUnavailable>;
  /** `read` with each row as the array of its column values. */
  readonly readValues: <Row extends ReadonlyArray<unknown>>(statement: Statement) => Effect.Effect<Row[], DatabaseUnavailable>;
  readonly em: Effect.Effect<EntityManager>;
  readonly transaction: <A, E, R>(work: (em: EntityManager) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | DatabaseUnavailable, R>;
  /** Whether each statement runs in a span of its own (`Database.statementSpans`). */
  readonly spans: boolean;
  /** `OrgSql.wakeDispatchersOnCommit`. */
  readonly wakeDispatchersOnCommit: Effect.Effect<void>;
}

/** The open transactions that wrote deliveries: `ownTransaction` wakes the dispatchers once each commits. */
const wakeOnCommit = new WeakSet<EntityManager>();

/**
 * The transaction this fiber's storage statements join, if any (see `inOneTransaction`): every
 * `OrgSql` made on the pool runs on its connection instead.
 */
const CurrentTransaction = Context.Reference<EntityManager | undefined>("platter/persistence/CurrentTransaction", {
  defaultValue: () => undefined,
});

/**
 * Whether this fiber's selects outside a transaction may read from a replica (see `onReplica`):
 * false unless a request that changes nothing and accepts data a bounded time behind says so.
 */
const ReplicaReads = Context.Reference<boolean>("platter/persistence/ReplicaReads", { defaultValue: () => false });

/**
 * Runs `program` with its organization selects on a replica current within the configured bound
 * (the primary when none is, or none is configured). Statements in a transaction, changes, and
 * everything outside `OrgSql` (authentication, sessions) stay on the primary. For a request that
 * changes nothing and whose caller has not written within the read-your-writes window.
 */
export const onReplica = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(program, ReplicaReads, true);

const organizationFilter = (scope: OrgScope, table: OrgTable, as: string): Statement =>
  sql`${raw(`${as}.${ORGANIZATION_TABLES[table]}`)} = ${scope.organizationId}`;

const andWhere = (where: Statement | undefined): Statement => (where === undefined ? EMPTY : sql` and (${where})`);

/** `select …` confined to `scope`, its joins too. */
const selectStatement = (scope: OrgScope, query: Select): Statement => {
  const joins = (query.joins ?? []).map((join) => joinStatement(scope, join)).reduce((all, join) => sql`${all} ${join}`, EMPTY);
  return sql`select ${raw(query.columns)} from ${raw(query.from)} ${raw(query.as)}${joins} where ${organizationFilter(scope, query.from, query.as)}${andWhere(query.where)} ${query.rest ?? EMPTY}`;
};

const joinStatement = (scope: OrgScope, join: Join): Statement => {
  const kind = raw(join.left === true ? "left join" : "join");
  if ("table" in join.to) {
    return sql`${kind} ${raw(`${join.to.table} ${join.as}`)} on ${organizationFilter(scope, join.to.table, join.as)} and (${raw(join.on)})`;
  }
  return sql`${kind}${raw(join.to.lateral === true ? " lateral" : "")} (${selectStatement(scope, join.to.select)}) ${raw(join.as)} on ${raw(join.on)}`;
};

/** `update …` confined to `scope`: the statement `OrgSql.update` runs (exported for the test that prints it). */
export const updateStatement = (scope: OrgScope, query: Update): Statement =>
  sql`update ${raw(query.table)} ${raw(query.as)} set ${query.set} where ${organizationFilter(scope, query.table, query.as)}${andWhere(query.where)}${raw(query.returning ? ` returning ${query.returning}` : "")}`;

/** The first row, or `NotFound`. */
const first = <Row>(rows: Row[]): Effect.Effect<Row, NotFound> => {
  const row = rows[0];
  return row === undefined ? Effect.fail(new NotFound()) : Effect.succeed(row);
};

/**
 * `OrgSql` on an executor: a class, so that making one (every storage call makes one for its
 * scope) is one small object rather than a dozen closures.
 */
class ScopedSql implements OrgSql {
  readonly scope: OrgScope;
  private readonly executor: Executor;

  constructor(scope: OrgScope, executor: Executor) {
    this.scope = scope;
    this.executor = executor;
  }

  get traced(): boolean {
    return this.executor.spans;
  }

  get wakeDispatchersOnCommit(): Effect.Effect<void> {
    return this.executor.wakeDispatchersOnCommit;
  }

  select<Row>(query: Select): Effect.Effect<Row[], DatabaseUnavailable> {
    return this.executor.read<Row>(selectStatement(this.scope, query));
  }

  one<Row>(query: Select): Effect.Effect<Row, NotFound | DatabaseUnavailable> {
    return Effect.flatMap(this.select<Row>(query), first);
  }

  selectValues<Row extends ReadonlyArray<unknown>>(query: Select): Effect.Effect<Row[], DatabaseUnavailable> {
    return this.executor.readValues<Row>(selectStatement(this.scope, query));
  }

  oneValues<Row extends ReadonlyArray<unknown>>(query: Select): Effect.Effect<Row, NotFound | DatabaseUnavailable> {
    return Effect.flatMap(this.selectValues<Row>(query), first);
  }

  update<Row>(query: Update): Effect.Effect<Row[], DatabaseUnavailable> {
    return this.executor.rows<Row>(updateStatement(this.scope, query));
  }

  delete(table: OrgTable, as: string, where: Statement): Effect.Effect<number, DatabaseUnavailable> {
    return this.rowsChanged(sql`delete from ${raw(table)} ${raw(as)} where ${organizationFilter(this.scope, table, as)}${andWhere(where)}`);
  }

  insert<Row extends object>(entity: EntityName<Row>, data: Omit<RequiredEntityData<Row>, "organization">): Effect.Effect<number, DatabaseUnavailable> {
    return this.inSpan(Effect.flatMap(this.executor.em, (em) => driverCall(async () => Number(await em.insert(entity, this.withOrganization(data))))), entity);
  }

  insertFrom(query: InsertFrom): Effect.Effect<number, DatabaseUnavailable> {
    return this.rowsChanged(
      sql`insert into ${raw(query.into)} (${raw(ORGANIZATION_TABLES[query.into])}, ${raw(query.columns)}) select ${this.scope.organizationId}, ${query.values} from ${raw(query.from)} ${raw(query.as)} where ${organizationFilter(this.scope, query.from, query.as)}${andWhere(query.where)}`,
    );
  }

  insertReturning<Row>(into: OrgTable, columns: string, values: Statement, returning: string): Effect.Effect<Row[], DatabaseUnavailable> {
    return this.executor.rows<Row>(
      sql`insert into ${raw(into)} (${raw(ORGANIZATION_TABLES[into])}, ${raw(columns)}) values (${this.scope.organizationId}, ${values}) returning ${raw(returning)}`,
    );
  }

  insertMany<Row extends object>(
    entity: EntityName<Row>, data: ReadonlyArray<Omit<RequiredEntityData<Row>, "organization">>,
  ): Effect.Effect<void, DatabaseUnavailable> {
    return data.length === 0
      ? Effect.void
      : this.inSpan(Effect.flatMap(this.executor.em, (em) => driverCall(() => em.insertMany(entity, data.map((row) => this.withOrganization(row))))), entity);
  }

  transaction<A, E>(work: (tx: OrgSql) => Effect.Effect<A, E>): Effect.Effect<A, E | DatabaseUnavailable> {
    return this.executor.transaction((em) => work(new ScopedSql(this.scope, transactionExecutor(em, this.executor.spans))));
  }

  tryLock(name: string): Effect.Effect<boolean, DatabaseUnavailable> {
    return Effect.map(
      this.executor.rows<{ locked: boolean }>(
        sql`select pg_try_advisory_xact_lock(hashtextextended(${`${this.scope.organizationId}:${name}`}, 0)) as locked`,
      ),
      ([row]) => row?.locked === true,
    );
  }

  /** An ORM insert in its statement span when the executor's statements have one. */
  private inSpan<A, E, Row extends object>(insert: Effect.Effect<A, E>, entity: EntityName<Row>): Effect.Effect<A, E> {
    return this.executor.spans ? inStatementSpan(insert, "insert", tableOf(entity)) : insert;
  }

  private withOrganization<T extends object>(data: T): never {
    return { ...data, organization: this.scope.organizationId } as never;
  }

  /** How many rows a data-changing statement (without its own `returning`) touched. */
  private rowsChanged(change: Statement): Effect.Effect<number, DatabaseUnavailable> {
    return Effect.map(
      this.executor.rows<{ n: number }>(sql`with changed as (${change} returning 1) select count(*)::int as n from changed`),
      ([row]) => row?.n ?? 0,
    );
  }
}

/** Runs `work` between `begin` and `commit` (or `rollback` when it fails) on a fresh EntityManager. */
const inTransaction = <A, E, R>(em: EntityManager, work: (em: EntityManager) => Effect.Effect<A, E, R>): Effect.Effect<A, E | DatabaseUnavailable, R> =>
  Effect.acquireUseRelease(
    driverCall(async () => {
      const fork = em.fork();
      await fork.begin();
      return fork;
    }),
    work,
    (fork, exit) => driverCall(() => (Exit.isSuccess(exit) ? fork.commit() : fork.rollback())),
  );

/** The table an entity maps (`db.collection.name` of an ORM insert's span). */
const tableOf = (entity: unknown): string | undefined => (entity as { meta?: { tableName?: string } }).meta?.tableName;

const transactionExecutor = (em: EntityManager, spans: boolean): Executor => {
  const rows = spans
    ? <Row>(statement: Statement) => inStatementSpan(driverCall(() => em.execute<Row[]>(statement.text, [...statement.values])), statement.text)
    : <Row>(statement: Statement) => driverCall(() => em.execute<Row[]>(statement.text, [...statement.values]));
  return {
    rows,
    read: rows,
    // MikroORM's rows are objects whose keys are in select-list order.
    readValues: <Row extends ReadonlyArray<unknown>>(statement: Statement) =>
      Effect.map(rows<Record<string, unknown>>(statement), (objects) => objects.map((row) => Object.values(row) as unknown as Row)),
    em: Effect.succeed(em),
    // Nested: the outer transaction already holds everything together.
    transaction: (work) => work(em),
    spans,
    wakeDispatchersOnCommit: Effect.sync(() => void wakeOnCommit.add(em)),
  };
};

/** Runs `work` in a transaction of its own, which the storage calls inside it join; wakes the dispatchers after its commit when it asked to. */
const ownTransaction = <A, E, R>(database: Database["Service"], work: (em: EntityManager) => Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let transaction: EntityManager | undefined;
    return Effect.tap(
      inTransaction(database.orm.em, (em) => {
        transaction = em;
        return Effect.provideService(work(em), CurrentTransaction, em);
      }),
      () => Effect.sync(() => (transaction !== undefined && wakeOnCommit.has(transaction) ? database.wakeDispatchers() : undefined)),
    );
  });

/** Each database's pool executor, made once (it depends on nothing else). */
const poolExecutors = new WeakMap<Database["Service"], Executor>();

const poolExecutor = (database: Database["Service"]): Executor => {
  let executor = poolExecutors.get(database);
  if (executor === undefined) {
    executor = makePoolExecutor(database);
    poolExecutors.set(database, executor);
  }
  return executor;
};

type RowsOf = (text: string, values: ReadonlyArray<unknown>) => Effect.Effect<unknown[], DatabaseUnavailable>;

/**
 * A select on the pool: in the fiber's transaction when there is one (`inTransaction`), else on a
 * replica when the fiber reads from one (`onReplica`), else on the primary.
 */
const poolRead =
  (inTransaction: (em: EntityManager, statement: Statement) => Effect.Effect<unknown[], DatabaseUnavailable>, primary: RowsOf, replica: RowsOf) =>
  <Row>(statement: Statement): Effect.Effect<Row[], DatabaseUnavailable> =>
    Effect.flatMap(CurrentTransaction, (em) =>
      em !== undefined
        ? inTransaction(em, statement)
        : Effect.flatMap(ReplicaReads, (onReplica) => (onReplica ? replica : primary)(statement.text, statement.values))) as Effect.Effect<Row[], DatabaseUnavailable>;

const makePoolExecutor = (database: Database["Service"]): Executor => ({
  rows: (statement) =>
    Effect.flatMap(CurrentTransaction, (em) =>
      em === undefined ? database.rows(statement.text, statement.values) : transactionExecutor(em, database.statementSpans).rows(statement)),
  read: poolRead((em, statement) => transactionExecutor(em, database.statementSpans).rows(statement), database.rows, database.replicaRows),
  readValues: poolRead((em, statement) => transactionExecutor(em, database.statementSpans).readValues(statement), database.valueRows, database.replicaValueRows),
  em: Effect.map(CurrentTransaction, (em) => em ?? database.orm.em.fork()),
  transaction: (work) => Effect.flatMap(CurrentTransaction, (em) => (em === undefined ? ownTransaction(database, work) : work(em))),
  spans: database.statementSpans,
  wakeDispatchersOnCommit: Effect.flatMap(CurrentTransaction, (em) =>
    Effect.sync(() => (em === undefined ? database.wakeDispatchers() : void wakeOnCommit.add(em)))),
});

/**
 * Runs `program` in one transaction: every storage call in it (organization SQL of any scope)
 * joins it, so the change and its audit row commit together, or, when anything in it fails (an
 * expected failure too), nothing is written. Inside another, it joins that one.
 */
export const inOneTransaction = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E | DatabaseUnavailable, R | Database> =>
  Effect.flatMap(Database, (database) => poolExecutor(database).transaction(() => program));

/** The scope's door to its organization's data, on the database's pool. */
export const orgSql = (database: Database["Service"], scope: OrgScope): OrgSql => new ScopedSql(scope, poolExecutor(database));

/**
 * Runs `write` in one transaction on the scope's organization data (`OrgSql`): for a use case that
 * writes rows of its own, as the application's demo data does (`@platter/persistence/operator`).
 */
export const scopedTransaction = <A, E>(scope: OrgScope, write: (tx: OrgSql) => Effect.Effect<A, E>): Effect.Effect<A, E | DatabaseUnavailable, Database> =>
  Database.use((database) => orgSql(database, scope).transaction(write));
