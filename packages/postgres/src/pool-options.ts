import type { ReplicaSettings } from "./read-replicas.ts";

/**
 * The pool's options: how long each wait on the server may last, and how to talk to the server
 * behind the URL (a transaction pooler, named statements, generic plans, LISTEN, replicas).
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
  /** Streaming replicas that may serve reads (`onReplica`); none when omitted. */
  readonly replicas?: ReplicaSettings | undefined;
  /**
   * Named statements run their generic plan from their first execution
   * (`plan_cache_mode=force_generic_plan`) instead of being planned anew at each one, which
   * PostgreSQL does when a generic plan's estimate looks worse than the custom ones, as it does for
   * a keyset page (`limit $n`): about 70 µs of PostgreSQL's CPU per list request (pg_stat_statements,
   * 2026-11-27), a sixth of its share. For the API, whose statements all walk one organization's
   * index in its order, so their plan does not depend on the values; not for processes whose
   * statements filter on skewed values (the dispatcher's, the Developer area's). Ignored behind a
   * transaction pooler (unnamed statements are planned each time anyway, and PgBouncer refuses the
   * `options` startup parameter). Default off.
   */
  readonly genericPlans?: boolean;
}

/**
 * node-postgres's options for a pool with `limits`: getting a connection waits at most
 * `connectTimeoutMs`, and a statement runs at most `statementTimeoutMs` (the server's
 * `statement_timeout`, set as a startup parameter); with `genericPlans`, named statements run their
 * generic plan. A transaction pooler refuses startup parameters: the role's settings apply there.
 */
export const poolOptions = (
  limits: Omit<DatabaseLimits, "startTimeoutMs"> & Pick<DatabaseConnection, "genericPlans">,
  pooler: DatabaseConnection["pooler"] = "none",
): { connectionTimeoutMillis: number; statement_timeout?: number; options?: string } => ({
  connectionTimeoutMillis: limits.connectTimeoutMs,
  ...(pooler === "transaction" ? {} : { statement_timeout: limits.statementTimeoutMs }),
  ...(pooler === "transaction" || limits.genericPlans !== true ? {} : { options: "-c plan_cache_mode=force_generic_plan" }),
});
