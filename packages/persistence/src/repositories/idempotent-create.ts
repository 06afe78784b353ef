import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type Created, IDEMPOTENCY_WINDOW_HOURS, IdempotencyKeyInProgress, IdempotencyKeyReused, type IdempotencyRequest,
  type OrgScope,
} from "@platter/domain";
import { Effect } from "effect";
import type { Orm } from "../database.ts";

/**
 * Creates a record at most once per Idempotency-Key. The key is claimed with a transaction-scoped
 * advisory lock (a concurrent repeat sees it taken: 409), checked against what was stored (same
 * body: replay; other body: 422), and stored in the very transaction that creates the record.
 */

type Outcome = { kind: "created" | "replayed"; id: number } | { kind: "in_progress" } | { kind: "reused" };

const lookUp = async (em: EntityManager, scope: OrgScope, idempotency: IdempotencyRequest): Promise<Outcome | undefined> => {
  const [lock] = await em.execute<{ locked: boolean }[]>("select pg_try_advisory_xact_lock(hashtextextended(?, 0)) as locked", [
    `idempotency:${scope.organizationId}:${idempotency.key}`,
  ]);
  if (!lock?.locked) return { kind: "in_progress" };
  const [stored] = await em.execute<{ request_fingerprint: string; response_body: { id: number }; live: boolean }[]>(
    `select request_fingerprint, response_body, created_at > now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours' as live
     from idempotency_keys where organization_id = ? and key = ?`,
    [scope.organizationId, idempotency.key],
  );
  if (stored === undefined) return undefined;
  if (!stored.live) {
    await em.execute("delete from idempotency_keys where organization_id = ? and key = ?", [scope.organizationId, idempotency.key]);
    return undefined;
  }
  return stored.request_fingerprint === idempotency.fingerprint
    ? { kind: "replayed", id: stored.response_body.id }
    : { kind: "reused" };
};

const remember = (em: EntityManager, scope: OrgScope, idempotency: IdempotencyRequest, id: number) =>
  em.execute(
    `insert into idempotency_keys (organization_id, key, request_fingerprint, response_status, response_body)
     values (?, ?, ?, 201, ?::jsonb)`,
    [scope.organizationId, idempotency.key, idempotency.fingerprint, JSON.stringify({ id })],
  );

/** Runs `create` in a transaction, once per key when `idempotency` is given. */
export const createOnce = (
  orm: Orm,
  scope: OrgScope,
  idempotency: IdempotencyRequest | undefined,
  create: (em: EntityManager) => Promise<number>,
): Effect.Effect<Created, IdempotencyKeyReused | IdempotencyKeyInProgress> =>
  Effect.flatMap(
    Effect.promise(() =>
      orm.em.fork().transactional(async (em): Promise<Outcome> => {
        const earlier = idempotency ? await lookUp(em, scope, idempotency) : undefined;
        if (earlier) return earlier;
        const id = await create(em);
        if (idempotency) await remember(em, scope, idempotency, id);
        return { kind: "created", id };
      }),
    ),
    (outcome): Effect.Effect<Created, IdempotencyKeyReused | IdempotencyKeyInProgress> => {
      switch (outcome.kind) {
        case "created":
        case "replayed":
          return Effect.succeed({ id: outcome.id, replayed: outcome.kind === "replayed" });
        case "in_progress":
          return Effect.fail(new IdempotencyKeyInProgress());
        case "reused":
          return Effect.fail(new IdempotencyKeyReused());
      }
    },
  );

/** Forgets keys older than the window; run periodically. */
export const pruneIdempotencyKeys = (orm: Orm): Promise<unknown> =>
  orm.em
    .getConnection()
    .execute(`delete from idempotency_keys where created_at < now() - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'`);
