import { NotFound, type OrgScope } from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, sql } from "../org-sql.ts";
import { traced } from "../traced.ts";
import type { DeveloperSession } from "./developer-sessions.ts";

/** The Developer area's audit log: what each session did, with the sign-in link that let it in, and when. */

/** One recorded action. */
export interface AuditEntry {
  readonly id: number;
  readonly session_id: number;
  readonly link_id: number;
  /** What was done: `api_key.created`, `api_key.revoked`. */
  readonly action: string;
  /** To what: `api_key 12`. */
  readonly subject: string;
  readonly at: string;
}

/** The audit log of Developer-area sessions. */
export class DeveloperAuditLog extends Context.Service<
  DeveloperAuditLog,
  {
    /**
     * Records that `session` did `action` to `subject`, at the Clock's now. The row is made from the
     * session's own row within its scope, so it can only name a session of the scope's organization.
     */
    readonly record: (session: DeveloperSession, action: string, subject: string) => Effect.Effect<void, NotFound>;
    /** The organization's latest entries, newest first. */
    readonly list: (scope: OrgScope, limit: number) => Effect.Effect<ReadonlyArray<AuditEntry>>;
  }
>()("platter/persistence/DeveloperAuditLog") {
  static readonly layer = Layer.effect(
    DeveloperAuditLog,
    Effect.gen(function* () {
      const database = yield* Database;
      return DeveloperAuditLog.of({
        record: traced("DeveloperAuditLog.record")(Effect.fnUntraced(function* (session: DeveloperSession, action: string, subject: string) {
          const at = new Date(yield* Clock.currentTimeMillis).toISOString();
          const inserted = yield* orgSql(database, session.scope).insertFrom({
            into: "developer_audit_log",
            columns: "session_id, link_id, action, subject, at",
            values: sql`s.id, s.link_id, ${action}, ${subject}, ${at}::timestamptz`,
            from: "developer_sessions",
            as: "s",
            where: sql`s.id = ${session.sessionId}`,
          });
          if (inserted === 0) return yield* new NotFound();
        })),
        list: traced("DeveloperAuditLog.list")(Effect.fnUntraced(function* (scope: OrgScope, limit: number) {
          const rows = yield* orgSql(database, scope).select<{ id: string; session_id: string; link_id: string; action: string; subject: string; at: string }>({
            columns: `a.id, a.session_id, a.link_id, a.action, a.subject, ${isoTimestamp("a.at")} as at`,
            from: "developer_audit_log",
            as: "a",
            rest: sql`order by a.at desc, a.id desc limit ${limit}`,
          });
          return rows.map((row) => ({
            id: Number(row.id), session_id: Number(row.session_id), link_id: Number(row.link_id),
            action: row.action, subject: row.subject, at: row.at,
          }));
        })),
      });
    }),
  );
}
