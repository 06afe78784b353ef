import { IDEMPOTENCY_WINDOW_HOURS } from "@platter/domain";
import { Clock, Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { traced } from "./traced.ts";
import { bigintArray } from "./webhooks/delivery-queue.ts";

/** Background clean-up across organizations: it only removes what has expired, never reads data out. */

/** What one batch of the history clean-up removed. */
export interface HistoryPruned {
  readonly deliveries: number;
  readonly messages: number;
}

export class Housekeeping extends Context.Service<
  Housekeeping,
  {
    /** Forgets Idempotency-Keys older than their window (lookups already ignore them; this reclaims the space). */
    readonly pruneIdempotencyKeys: () => Effect.Effect<void>;
    /**
     * Removes up to `batchSize` settled deliveries (succeeded or failed) that settled longer than
     * `retentionMs` ago, with their attempts, and up to `batchSize` messages fanned out that long
     * ago with no delivery left. A pending delivery, and its message, is never removed. Each batch
     * is its own short transaction, so no lock is held long; the cut-off comes from the Clock.
     */
    readonly pruneDeliveryHistory: (retentionMs: number, batchSize: number) => Effect.Effect<HistoryPruned>;
  }
>()("platter/persistence/Housekeeping") {
  static readonly layer = Layer.effect(
    Housekeeping,
    Effect.gen(function* () {
      const { orm, rows } = yield* Database;
      return Housekeeping.of({
        pruneIdempotencyKeys: traced("Housekeeping.pruneIdempotencyKeys")(Effect.fnUntraced(function* () {
          yield* rows(`delete from idempotency_keys where created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`);
        })),
        pruneDeliveryHistory: traced("Housekeeping.pruneDeliveryHistory")(Effect.fnUntraced(function* (retentionMs: number, batchSize: number) {
          const cutoff = new Date((yield* Clock.currentTimeMillis) - retentionMs).toISOString();
          const deliveries = yield* Effect.promise(() =>
            orm.em.fork().transactional(async (em) => {
              const doomed = await em.execute<{ id: string }[]>(
                `select id from webhook_deliveries where status <> 'pending' and completed_at < ?::timestamptz
                 order by completed_at limit ? for update skip locked`,
                [cutoff, batchSize],
              );
              if (doomed.length === 0) return 0;
              const ids = bigintArray(doomed.map((row) => row.id));
              await em.execute("delete from webhook_attempts where delivery_id = any(?::bigint[])", [ids]);
              await em.execute("delete from webhook_deliveries where id = any(?::bigint[])", [ids]);
              return doomed.length;
            }),
          );
          const [messages] = yield* rows<{ n: number }>(
            `with doomed as (
               select m.id from webhook_messages m
               where m.created_at < ?::timestamptz
                 and not exists (select 1 from webhook_deliveries d where d.message_id = m.id)
               order by m.created_at limit ? for update skip locked
             ), deleted as (delete from webhook_messages m using doomed where m.id = doomed.id returning 1)
             select count(*)::int as n from deleted`,
            [cutoff, batchSize],
          );
          return { deliveries, messages: messages?.n ?? 0 };
        })),
      });
    }),
  );
}
