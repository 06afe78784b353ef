import { type Actor, NotFound, type OrgScope } from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { AuditLogEntity } from "./entities/index.ts";
import { isoTimestamp } from "./keyset-page.ts";
import { orgSql, sql } from "./org-sql.ts";
import { traced } from "./traced.ts";

/** An organization's audit log: who changed its keys, endpoints and deliveries, what, and when. */

/** One recorded action, and its actor: a Developer-area session (and its sign-in link), or the operator. */
export interface AuditEntry {
  readonly id: number;
  readonly session_id: number | null;
  readonly link_id: number | null;
  /** The operator who made the change (`root via the CLI`), for a change not made in a session. */
  readonly operator: string | null;
  /** What was done: `api_key.created`, `api_key.revoked`. */
  readonly action: string;
  /** To what: `api_key 12`. */
  readonly subject: string;
  readonly at: string;
}

/** The organizations' audit log. */
export class AuditLog extends Context.Service<
  AuditLog,
  {
    /**
     * Records that `actor` did `action` to `subject`, at the Clock's now, in the actor's scope. A
     * session's row is made from the session's own row within that scope, so it can only name a
     * session of the scope's organization (`NotFound` otherwise).
     */
    readonly record: (actor: Actor, action: string, subject: string) => Effect.Effect<void, NotFound>;
    /** The organization's latest entries, newest first. */
    readonly list: (scope: OrgScope, limit: number) => Effect.Effect<ReadonlyArray<AuditEntry>>;
  }
>()("platter/persistence/AuditLog") {
  static readonly layer = Layer.effect(
    AuditLog,
    Effect.gen(function* () {
      const database = yield* Database;
      return AuditLog.of({
        record: traced("AuditLog.record")(Effect.fnUntraced(function* (actor: Actor, action: string, subject: string) {
          const at = new Date(yield* Clock.currentTimeMillis).toISOString();
          const org = orgSql(database, actor.scope);
          if (actor._tag === "Operator") {
            yield* org.insert(AuditLogEntity, { operator: actor.name, action, subject, at: new Date(at) });
            return;
          }
          const inserted = yield* org.insertFrom({
            into: "audit_log",
            columns: "session_id, link_id, action, subject, at",
            values: sql`s.id, s.link_id, ${action}, ${subject}, ${at}::timestamptz`,
            from: "developer_sessions",
            as: "s",
            where: sql`s.id = ${actor.sessionId}`,
          });
          if (inserted === 0) return yield* new NotFound();
        })),
        list: traced("AuditLog.list")(Effect.fnUntraced(function* (scope: OrgScope, limit: number) {
          const rows = yield* orgSql(database, scope).select<{
            id: string; session_id: string | null; link_id: string | null; operator: string | null; action: string; subject: string; at: string;
          }>({
            columns: `a.id, a.session_id, a.link_id, a.operator, a.action, a.subject, ${isoTimestamp("a.at")} as at`,
            from: "audit_log",
            as: "a",
            rest: sql`order by a.at desc, a.id desc limit ${limit}`,
          });
          const idOrNull = (text: string | null) => (text === null ? null : Number(text));
          return rows.map((row) => ({
            id: Number(row.id), session_id: idOrNull(row.session_id), link_id: idOrNull(row.link_id), operator: row.operator,
            action: row.action, subject: row.subject, at: row.at,
          }));
        })),
      });
    }),
  );
}
