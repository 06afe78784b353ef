import { type Actor, type AuditActorKind, type AuditDetails, type AuditLogFilter, auditLogListing, type ListPage, NotFound, type OrgScope, type PageRequest, type DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { nowPlusValue } from "./database-clock.ts";
import { AuditLogEntity } from "./entities/index.ts";
import { isoTimestamp, readFirstRows, readKeysetPage } from "./keyset-page.ts";
import { type Join, orgSql, raw, sql, type Statement } from "./org-sql.ts";

/** An organization's audit log: who changed its keys, endpoints and deliveries, what, and when. */

/** One recorded action, and its actor: a Developer-area session (and its sign-in link), or the operator. */
export interface AuditEntry {
  readonly id: number;
  readonly session_id: number | null;
  readonly link_id: number | null;
  /** The operator who made the change (`root via the CLI`), for a change not made in a session. */
  readonly operator: string | null;
  /** The API key that made the change (`platter trigger` with a key): its name and prefix. */
  readonly api_key: { readonly id: number; readonly name: string; readonly prefix: string } | null;
  /** The session's device (`Chrome on Linux`), for a change made in a session that kept one. */
  readonly device_hint: string | null;
  /** What was done: `api_key.created`, `api_key.revoked`. */
  readonly action: string;
  /** To what: `api_key 12`. */
  readonly subject: string;
  /** What the change changed, before and after (an endpoint's edit); null for an entry that records none. */
  readonly details: AuditDetails | null;
  readonly at: string;
}

const COLUMNS = `a.id, a.session_id, a.link_id, a.operator, s.device_hint, a.action, a.subject, a.details, ${isoTimestamp("a.at")} as at,
  a.api_key_id, k.name as api_key_name, k.display_prefix as api_key_prefix`;

/** The session an entry names, for its device hint, and the key, for its name (neither for the operator's entries). */
const ACTOR_OF_ENTRY: ReadonlyArray<Join> = [
  { to: { table: "developer_sessions" }, as: "s", on: "s.id = a.session_id", left: true },
  { to: { table: "api_keys" }, as: "k", on: "k.id = a.api_key_id", left: true },
];

type EntryRow = Omit<AuditEntry, "id" | "session_id" | "link_id" | "api_key"> & {
  id: string; session_id: string | null; link_id: string | null; api_key_id: string | null; api_key_name: string | null; api_key_prefix: string | null;
};

const idOrNull = (text: string | null) => (text === null ? null : Number(text));

const toEntry = (row: EntryRow): AuditEntry => ({
  id: Number(row.id), session_id: idOrNull(row.session_id), link_id: idOrNull(row.link_id), operator: row.operator,
  api_key: row.api_key_id === null ? null : { id: Number(row.api_key_id), name: row.api_key_name ?? "", prefix: row.api_key_prefix ?? "" },
  device_hint: row.device_hint, action: row.action, subject: row.subject, details: row.details, at: row.at,
});

/** The entries of each kind of actor. */
const ACTOR_CONDITION: Readonly<Record<AuditActorKind, string>> = {
  session: "a.session_id is not null", operator: "a.operator is not null", api_key: "a.api_key_id is not null",
};

/**
 * A page's filter: with the time range and the cursor's key (`readKeysetPage`), one range of the
 * organization's `(organization_id, at desc, id desc)` index, filtered.
 */
const pageFilter = (filter: AuditLogFilter): ReadonlyArray<Statement> => [
  ...(filter.action === undefined ? [] : [sql`a.action = ${filter.action}`]),
  ...(filter.actor === undefined ? [] : [raw(ACTOR_CONDITION[filter.actor])]),
];

/** The log as `auditLogListing` reads it: its entries with their actors, `at` then `id`, newest first. */
const ENTRIES = { columns: COLUMNS, from: "audit_log", as: "a", joins: ACTOR_OF_ENTRY, keyColumns: ["a.at", "a.id"], keyCasts: ["timestamptz", "bigint"] } as const;

/** The organizations' audit log. */
export class AuditLog extends Context.Service<
  AuditLog,
  {
    /**
     * Records that `actor` did `action` to `subject`, at the database's now(), in the actor's scope. A
     * session's row is made from the session's own row within that scope, so it can only name a
     * session of the scope's organization (`NotFound` otherwise). `details`, when given, says what
     * changed (at most `AUDIT_DETAILS_MAX_BYTES` as JSON text: the column's check refuses more).
     */
    readonly record: (actor: Actor, action: string, subject: string, details?: AuditDetails) => Effect.Effect<void, NotFound | DatabaseUnavailable>;
    /** The organization's latest entries, newest first. */
    readonly list: (scope: OrgScope, limit: number) => Effect.Effect<ReadonlyArray<AuditEntry>, DatabaseUnavailable>;
    /** One page of the organization's entries (`auditLogListing`: newest first), filtered. */
    readonly page: (scope: OrgScope, filter: AuditLogFilter, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<AuditEntry>, DatabaseUnavailable>;
    /** The actions the organization's log holds, in alphabetical order (a filter's choices). */
    readonly actions: (scope: OrgScope) => Effect.Effect<ReadonlyArray<string>, DatabaseUnavailable>;
  }
>()("platter/persistence/AuditLog") {
  static readonly layer = Layer.effect(
    AuditLog,
    Effect.gen(function* () {
      const database = yield* Database;
      return AuditLog.of({
        record: Effect.fnUntraced(function* (actor: Actor, action: string, subject: string, details?: AuditDetails) {
          const org = orgSql(database, actor.scope);
          if (actor._tag === "Operator") {
            yield* org.insert(AuditLogEntity, { operator: actor.name, action, subject, at: nowPlusValue(), details: details ?? null });
            return;
          }
          if (actor._tag === "ApiKey") {
            yield* org.insert(AuditLogEntity, { apiKey: actor.scope.apiKeyId, action, subject, at: nowPlusValue(), details: details ?? null });
            return;
          }
          const inserted = yield* org.insertFrom({
            into: "audit_log",
            columns: "session_id, link_id, action, subject, details, at",
            values: sql`s.id, s.link_id, ${action}, ${subject}, ${details === undefined ? null : JSON.stringify(details)}::jsonb, now()`,
            from: "developer_sessions",
            as: "s",
            where: sql`s.id = ${actor.sessionId}`,
          });
          if (inserted === 0) return yield* new NotFound();
        }),
        list: (scope: OrgScope, limit: number) => readFirstRows(orgSql(database, scope), auditLogListing, ENTRIES, limit, toEntry),
        page: (scope: OrgScope, filter: AuditLogFilter, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(orgSql(database, scope), auditLogListing, { ...ENTRIES, filter: pageFilter(filter), range: { from: filter.from, to: filter.to } }, page, toEntry),
        actions: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<{ action: string }>({
            columns: "distinct a.action",
            from: "audit_log",
            as: "a",
            rest: raw("order by a.action"),
          });
          return rows.map((row) => row.action);
        }),
      });
    }),
  );
}
