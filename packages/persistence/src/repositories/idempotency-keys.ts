import {
  IDEMPOTENCY_WINDOW_HOURS, IdempotencyKeyInProgress, IdempotencyKeyReused, type IdempotencyRequest, type OrgScope, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { IdempotencyKeyEntity } from "../entities/index.ts";
import { orgSql, sql } from "../org-sql.ts";

/**
 * The organization's Idempotency-Keys: a create claims its key with a transaction-scoped advisory
 * lock (a concurrent repeat sees it taken: 409), checks it against what was stored (same body:
 * replay; other body: 422), and stores it in the very transaction that creates the record. Both
 * run inside the create's transaction (`inOneTransaction`, the application's `createOnce`).
 */
export class IdempotencyKeys extends Context.Service<
  IdempotencyKeys,
  {
    /**
     * Takes `idempotency`'s key for this transaction and returns the id an earlier request with it
     * created, or `undefined` when the key is new (or expired, and then forgotten);
     * `IdempotencyKeyInProgress` while another transaction holds it, `IdempotencyKeyReused` for another body.
     */
    readonly earlier: (
      scope: OrgScope,
      idempotency: IdempotencyRequest,
    ) => Effect.Effect<number | undefined, IdempotencyKeyInProgress | IdempotencyKeyReused | DatabaseUnavailable>;
    /** Stores the key with the id its create made (201), in the create's transaction. */
    readonly remember: (scope: OrgScope, idempotency: IdempotencyRequest, id: number) => Effect.Effect<void, DatabaseUnavailable>;
  }
>()("platter/persistence/IdempotencyKeys") {
  static readonly layer = Layer.effect(
    IdempotencyKeys,
    Effect.gen(function* () {
      const database = yield* Database;
      return IdempotencyKeys.of({
        earlier: Effect.fnUntraced(function* (scope: OrgScope, idempotency: IdempotencyRequest) {
          const tx = orgSql(database, scope);
          if (!(yield* tx.tryLock(`idempotency:${idempotency.key}`))) return yield* new IdempotencyKeyInProgress();
          const [stored] = yield* tx.select<{ request_fingerprint: string; response_body: { id: number }; live: boolean }>({
            columns: `k.request_fingerprint, k.response_body, k.created_at > now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours' as live`,
            from: "idempotency_keys",
            as: "k",
            where: sql`k.key = ${idempotency.key}`,
          });
          if (stored === undefined) return undefined;
          if (!stored.live) {
            yield* tx.delete("idempotency_keys", "k", sql`k.key = ${idempotency.key}`);
            return undefined;
          }
          if (stored.request_fingerprint !== idempotency.fingerprint) return yield* new IdempotencyKeyReused();
          return stored.response_body.id;
        }),
        remember: (scope: OrgScope, idempotency: IdempotencyRequest, id: number) =>
          Effect.asVoid(orgSql(database, scope).insert(IdempotencyKeyEntity, {
            key: idempotency.key,
            requestFingerprint: idempotency.fingerprint,
            responseStatus: 201,
            responseBody: { id },
          })),
      });
    }),
  );
}
