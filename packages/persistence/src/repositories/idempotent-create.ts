import {
  type Created, IDEMPOTENCY_WINDOW_HOURS, type IdempotencyError, IdempotencyKeyInProgress, IdempotencyKeyReused,
  type IdempotencyRequest, type DatabaseUnavailable,
} from "@platter/domain";
import { Effect } from "effect";
import { IdempotencyKeyEntity } from "../entities/index.ts";
import { type OrgSql, sql } from "../org-sql.ts";

/**
 * Creates a record at most once per Idempotency-Key. The key is claimed with a transaction-scoped
 * advisory lock (a concurrent repeat sees it taken: 409), checked against what was stored (same
 * body: replay; other body: 422), and stored in the very transaction that creates the record.
 */

/** An earlier request with this key, or `undefined` when the key is new (or expired, and then forgotten). */
const earlierRequest = Effect.fnUntraced(function* (tx: OrgSql, idempotency: IdempotencyRequest) {
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
});

/** Runs `create` in a transaction of the scope, once per key when `idempotency` is given. */
export const createOnce = <E>(
  org: OrgSql,
  idempotency: IdempotencyRequest | undefined,
  create: (tx: OrgSql) => Effect.Effect<number, E | DatabaseUnavailable>,
): Effect.Effect<Created, E | IdempotencyError | DatabaseUnavailable> =>
  org.transaction(
    Effect.fnUntraced(function* (tx) {
      const earlier = idempotency === undefined ? undefined : yield* earlierRequest(tx, idempotency);
      if (earlier !== undefined) return { id: earlier, replayed: true };
      const id = yield* create(tx);
      if (idempotency !== undefined) {
        yield* tx.insert(IdempotencyKeyEntity, {
          key: idempotency.key,
          requestFingerprint: idempotency.fingerprint,
          responseStatus: 201,
          responseBody: { id },
        });
      }
      return { id, replayed: false };
    }),
  );
