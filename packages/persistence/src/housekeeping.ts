import { IDEMPOTENCY_WINDOW_HOURS, type DatabaseUnavailable } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { nowPlus } from "./database-clock.ts";
import { ENDED_DELIVERY, ENDED_DELIVERY_OF_DELETED } from "./webhooks/attempt-record.ts";

/** Background clean-up across organizations: it only removes what has expired, never reads data out. */

export class Housekeeping extends Context.Service<
  Housekeeping,
  {
    /** Forgets Idempotency-Keys older than their window (lookups already ignore them; this reclaims the space). */
    readonly pruneIdempotencyKeys: () => Effect.Effect<void, DatabaseUnavailable>;
    /**
     * Removes up to `batchSize` endpoint notices created longer than `retentionMs` ago whose
     * operator delivery has settled, except the one an endpoint's page still shows (the latest of
     * the endpoint's current stage). Returns how many.
     */
    readonly pruneNotices: (retentionMs: number, batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
    /** Removes up to `batchSize` audit-log rows older than `retentionMs` (`AUDIT_LOG_RETENTION`), oldest first. Returns how many. */
    readonly pruneAuditLog: (retentionMs: number, batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Removes up to `batchSize` Developer-area sessions, then up to `batchSize` sign-in links, that
     * expired longer than `graceMs` ago, oldest first. One the audit log still names (a session that
     * changed something, its link) is kept until those rows go (`pruneAuditLog`), as is a link whose
     * session is still kept. Returns how many of each.
     */
    readonly pruneExpiredAccess: (graceMs: number, batchSize: number) => Effect.Effect<{ readonly sessions: number; readonly links: number }, DatabaseUnavailable>;
    /**
     * Removes up to `batchSize` API keys that ended (revoked, expired, or rolled out and past their
     * overlap) longer than `graceMs` ago, with a local listener a key has (and its secret) once no
     * delivery or notice of the listener is left. A key the audit log still names stays until those
     * rows go (`pruneAuditLog`); the request log keeps only its number. Returns how many.
     */
    readonly pruneEndedApiKeys: (graceMs: number, batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Ends up to `batchSize` pending deliveries of disabled endpoints (failed, "endpoint disabled", or
     * "endpoint deleted" for a deleted one), as disabling and deleting do: one written by a create or a replay that raced the disable's transaction
     * would otherwise wait for ever and keep its endpoint's history busy until it expires. Returns how many.
     */
    readonly endDeliveriesOfDisabledEndpoints: (batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Removes up to `batchSize` deleted endpoints that no delivery or notice refers to any more (their
     * history went with retention, `HistoryPartitions.dropExpired` and `pruneNotices`), oldest deletion first. Returns how many.
     */
    readonly pruneDeletedEndpoints: (batchSize: number) => Effect.Effect<number, DatabaseUnavailable>;
  }
>()("platter/persistence/Housekeeping") {
  static readonly layer = Layer.effect(
    Housekeeping,
    Effect.gen(function* () {
      const { rows } = yield* Database;
      /**
       * Deletes from `table` up to `batchSize` of the rows `oldest` selects, in one short statement
       * skipping rows another sweep holds. Returns how many.
       */
      const removeOldest = Effect.fnUntraced(function* (oldest: string, table: string, batchSize: number) {
        const [pruned] = yield* rows<{ n: number }>(
          `with doomed as (${oldest} limit ? for update skip locked),
             removed as (delete from ${table} t using doomed where t.id = doomed.id returning 1)
           select count(*)::int as n from removed`,
          [batchSize],
        );
        return pruned?.n ?? 0;
      });
      return Housekeeping.of({
        pruneIdempotencyKeys: Effect.fnUntraced(function* () {
          yield* rows(`delete from idempotency_keys where created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`);
        }),
        pruneNotices: Effect.fnUntraced(function* (retentionMs: number, batchSize: number) {
          const cutoff = nowPlus(-retentionMs);
          const [pruned] = yield* rows<{ n: number }>(
            `with doomed as (
               select n.id from endpoint_notices n
               where n.created_at < ${cutoff} and n.operator_status <> 'pending'
                 and not exists (
                   select 1 from webhook_endpoints w
                   where w.id = n.endpoint_id and w.notice_stage = n.kind
                     and n.id = (select max(m.id) from endpoint_notices m where m.endpoint_id = n.endpoint_id and m.kind = n.kind)
                 )
               order by n.id limit ? for update skip locked
             ), removed as (delete from endpoint_notices n using doomed where n.id = doomed.id returning 1)
             select count(*)::int as n from removed`,
            [batchSize],
          );
          return pruned?.n ?? 0;
        }),
        pruneAuditLog: Effect.fnUntraced(function* (retentionMs: number, batchSize: number) {
          const cutoff = nowPlus(-retentionMs);
          return yield* removeOldest(`select a.id from audit_log a where a.at < ${cutoff} order by a.at, a.id`, "audit_log", batchSize);
        }),
        pruneExpiredAccess: Effect.fnUntraced(function* (graceMs: number, batchSize: number) {
          const cutoff = nowPlus(-graceMs);
          const sessions = yield* removeOldest(
            `select s.id from developer_sessions s
             where s.expires_at < ${cutoff} and not exists (select 1 from audit_log a where a.session_id = s.id)
             order by s.expires_at, s.id`,
            "developer_sessions", batchSize,
          );
          const links = yield* removeOldest(
            `select l.id from developer_sign_in_links l
             where l.expires_at < ${cutoff}
               and not exists (select 1 from developer_sessions s where s.link_id = l.id)
               and not exists (select 1 from audit_log a where a.link_id = l.id)
             order by l.expires_at, l.id`,
            "developer_sign_in_links", batchSize,
          );
          return { sessions, links };
        }),
        pruneEndedApiKeys: Effect.fnUntraced(function* (graceMs: number, batchSize: number) {
          const cutoff = nowPlus(-graceMs);
          // The listener rows go in the same statement: the keys' references are checked at its end.
          const [pruned] = yield* rows<{ n: number }>(
            `with doomed as (
               select k.id from api_keys k
               where least(coalesce(k.revoked_at, 'infinity'), coalesce(k.expires_at, 'infinity')) < ${cutoff}
                 and not exists (select 1 from audit_log a where a.api_key_id = k.id)
                 and not exists (
                   select 1 from webhook_endpoints w
                   where w.listener_key_id = k.id
                     and (exists (select 1 from webhook_deliveries d where d.endpoint_id = w.id)
                       or exists (select 1 from endpoint_notices n where n.organization_id = w.organization_id and n.endpoint_id = w.id))
                 )
               order by k.id limit ? for update of k skip locked
             ),
             listeners as (delete from webhook_endpoints w using doomed where w.listener_key_id = doomed.id),
             removed as (delete from api_keys k using doomed where k.id = doomed.id returning 1)
             select count(*)::int as n from removed`,
            [batchSize],
          );
          return pruned?.n ?? 0;
        }),
        endDeliveriesOfDisabledEndpoints: Effect.fnUntraced(function* (batchSize: number) {
          const [ended] = yield* rows<{ n: number }>(
            `with stranded as (
               select d.id, e.deleted_at is not null as deleted
               from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id and e.organization_id = d.organization_id
               where d.status = 'pending' and not d.via_listener and not e.enabled
               limit ? for update of d skip locked
             ),
             disabled as (update webhook_deliveries d set ${ENDED_DELIVERY} from stranded s where d.id = s.id and not s.deleted returning 1),
             deleted as (update webhook_deliveries d set ${ENDED_DELIVERY_OF_DELETED} from stranded s where d.id = s.id and s.deleted returning 1)
             select (select count(*)::int from disabled) + (select count(*)::int from deleted) as n`,
            [batchSize],
          );
          return ended?.n ?? 0;
        }),
        pruneDeletedEndpoints: Effect.fnUntraced(function* (batchSize: number) {
          return yield* removeOldest(
            `select w.id from webhook_endpoints w
             where w.deleted_at is not null
               and not exists (select 1 from webhook_deliveries d where d.endpoint_id = w.id)
               and not exists (select 1 from endpoint_notices n where n.organization_id = w.organization_id and n.endpoint_id = w.id)
             order by w.deleted_at, w.id`,
            "webhook_endpoints", batchSize,
          );
        }),
      });
    }),
  );
}
