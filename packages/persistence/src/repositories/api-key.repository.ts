import {
  type Access, authenticatedScope, generateApiKey, hashApiKey, InvalidTransition, type KeyEnvironment, NotFound, type OrgScope, Unauthenticated, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { orDieButOutage } from "@platter/postgres";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type OrgSql, orgSql, raw, sql } from "../org-sql.ts";

/**
 * API keys: authentication (the one place a request's scope is made), and an organization's keys.
 * A key's secret is returned once, at creation; only its SHA-256 is stored.
 */

interface KeyRow {
  id: string;
  organization_id: string;
  access: Access;
  currency: string;
  since_write_ms: number | null;
}

/** A live key: its request scope, and how long ago it last wrote (`recordWrite`), if it ever did. */
export interface AuthenticatedKey {
  readonly scope: OrgScope;
  readonly msSinceWrite: number | undefined;
}

/** A key as its organization sees it: never the secret, only its recognisable prefix. */
export interface ApiKeyView {
  readonly id: number;
  /** What its organization calls it ('' for keys made before keys had names). */
  readonly name: string;
  readonly access: Access;
  readonly prefix: string;
  readonly created_at: string;
  readonly last_used_at: string | null;
  readonly revoked_at: string | null;
  /** When it stops working (null: never); for a rolled key, the end of its overlap. */
  readonly expires_at: string | null;
  /** Whether `expires_at` has passed. */
  readonly expired: boolean;
  /** The key that replaced it when it was rolled. */
  readonly replaced_by: number | null;
}

/** A rolled key: the new key (its secret returned this once) and until when the old one works. */
export interface RolledKey {
  readonly id: number;
  readonly key: string;
  readonly replaced: number;
  readonly old_key_expires_at: string;
}

const VIEW_COLUMNS = `k.id, k.name, k.access, k.display_prefix as prefix, ${isoTimestamp("k.created_at")} as created_at,
  ${isoTimestamp("k.last_used_at")} as last_used_at, ${isoTimestamp("k.revoked_at")} as revoked_at,
  ${isoTimestamp("k.expires_at")} as expires_at, coalesce(k.expires_at <= now(), false) as expired, k.replaced_by`;
type KeyViewRow = Omit<ApiKeyView, "id" | "replaced_by"> & { id: string; replaced_by: string | null };
const toView = (row: KeyViewRow): ApiKeyView => ({ ...row, id: Number(row.id), replaced_by: row.replaced_by === null ? null : Number(row.replaced_by) });

/** A key that works now: neither revoked nor expired (`k` is the key). */
const LIVE = "k.revoked_at is null and (k.expires_at is null or k.expires_at > now())";

/**
 * A live key by its hash, with its organization's currency. Before a scope exists: the key's hash
 * is the only thing that selects the organization. One string for every call (its hash is
 * computed once, for the prepared statements' lookup).
 */
const AUTHENTICATE = `select k.id, k.organization_id, k.access, o.currency,
    (extract(epoch from now() - k.wrote_at) * 1000)::float8 as since_write_ms
  from api_keys k
  join organizations o on o.id = k.organization_id
  where k.key_hash = ? and ${LIVE}`;

/** `last_used_at` is written at most once a minute per key and process: authentication stays one read. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Keys whose last mark a process remembers at most. */
const LAST_USED_KEYS_HELD = 100_000;

/** Whether the scope's organization is a sandbox (its keys are `platter_test_…`) or live. */
const environmentOf = (org: OrgSql): Effect.Effect<KeyEnvironment, DatabaseUnavailable> =>
  Effect.map(
    orDieButOutage(org.one<{ sandbox: boolean }>({ columns: "o.sandbox_of is not null as sandbox", from: "organizations", as: "o" })),
    (row) => (row.sandbox ? "test" : "live"),
  );

export class ApiKeyRepository extends Context.Service<
  ApiKeyRepository,
  {
    /** The scope of a live key, or `Unauthenticated`. The only maker of request scopes. */
    readonly authenticate: (secret: string) => Effect.Effect<AuthenticatedKey, Unauthenticated | DatabaseUnavailable>;
    /** `authenticate` for a caller that already hashed the key (`hashApiKey`): the API hashes it once per request. */
    readonly authenticateHash: (keyHash: string) => Effect.Effect<AuthenticatedKey, Unauthenticated | DatabaseUnavailable>;
    /**
     * Notes that the scope's key writes now (the API, before a create, when reads may go to
     * replicas): its reads go to the primary for the read-your-writes window after it.
     */
    readonly recordWrite: (scope: OrgScope) => Effect.Effect<void, DatabaseUnavailable>;
    /**
     * Locks the organization's row for the rest of the caller's transaction (`inOneTransaction`), so
     * creates take turns, and counts its working keys (not revoked, not expired, not replaced by a
     * roll): the limit is the caller's (`ApiKeys.create`).
     */
    readonly lockForCreation: (scope: OrgScope) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Inserts a new key with `name` (what its organization calls it) that expires `lifetimeMs` from
     * now (never when undefined; checked with `checkKeyLifetime`); its secret is returned this once.
     */
    readonly create: (
      scope: OrgScope, access: Access, name?: string, lifetimeMs?: number,
    ) => Effect.Effect<{ readonly id: number; readonly key: string }, DatabaseUnavailable>;
    /**
     * Replaces a live key with a new one (same name, access and lifetime from now) whose secret is
     * returned this once; the old key keeps working for `overlapMs` (checked with
     * `checkRollOverlap`; sooner if it expired sooner anyway). `NotFound` for another
     * organization's key; `InvalidTransition` for a key that is revoked, expired or already rolled.
     */
    readonly roll: (scope: OrgScope, id: number, overlapMs: number) => Effect.Effect<RolledKey, NotFound | InvalidTransition | DatabaseUnavailable>;
    /** Revokes a key at once; revoking it again is harmless and changes nothing (`changed` false). */
    readonly revoke: (scope: OrgScope, id: number) => Effect.Effect<{ readonly id: number; readonly changed: boolean }, NotFound | DatabaseUnavailable>;
    /** The organization's keys, oldest first. */
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<ApiKeyView>, DatabaseUnavailable>;
    /** One of the organization's keys; `NotFound` for another organization's. */
    readonly find: (scope: OrgScope, id: number) => Effect.Effect<ApiKeyView, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/ApiKeyRepository") {
  static readonly layer = Layer.effect(
    ApiKeyRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      const lastWritten = new Map<number, number>();
      const touch = (scope: OrgScope) => {
        const now = Date.now();
        if (now - (lastWritten.get(scope.apiKeyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
        // Bounded: past this many keys the marks start over (at worst one more write per key that minute).
        if (lastWritten.size >= LAST_USED_KEYS_HELD) lastWritten.clear();
        lastWritten.set(scope.apiKeyId, now);
        // Fire and forget: a lost timestamp must never fail the request it describes.
        Effect.runFork(
          orgSql(database, scope).update({
            table: "api_keys",
            as: "k",
            set: sql`last_used_at = now()`,
            where: sql`k.id = ${scope.apiKeyId}`,
          }).pipe(Effect.ignoreCause),
        );
      };
      const authenticateHash = Effect.fnUntraced(function* (keyHash: string) {
        const [row] = yield* database.rows<KeyRow>(AUTHENTICATE, [keyHash]);
        if (row === undefined) return yield* new Unauthenticated();
        const scope = authenticatedScope({
          organizationId: Number(row.organization_id),
          access: row.access,
          currency: row.currency,
          apiKeyId: Number(row.id),
        });
        touch(scope);
        return { scope, msSinceWrite: row.since_write_ms ?? undefined } as AuthenticatedKey;
      });
      return ApiKeyRepository.of({
        authenticate: (secret: string) => authenticateHash(hashApiKey(secret)),
        authenticateHash,
        recordWrite: (scope: OrgScope) =>
          Effect.asVoid(orgSql(database, scope).update({
            table: "api_keys",
            as: "k",
            set: sql`wrote_at = now()`,
            where: sql`k.id = ${scope.apiKeyId}`,
          })),
        lockForCreation: Effect.fnUntraced(function* (scope: OrgScope) {
          const tx = orgSql(database, scope);
          // The organization's row, locked until the commit, makes creates take turns, so two cannot
          // both take the last place. `no key update` leaves other writes' foreign-key checks unblocked.
          yield* tx.select({ columns: "o.id", from: "organizations", as: "o", rest: sql`for no key update` });
          const [count] = yield* tx.select<{ n: number }>({
            columns: "count(*)::int as n", from: "api_keys", as: "k", where: raw(`${LIVE} and k.replaced_by is null`),
          });
          return count?.n ?? 0;
        }),
        create: (scope: OrgScope, access: Access, name = "", lifetimeMs?: number) =>
          orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              const key = generateApiKey(access, yield* environmentOf(tx));
              // Expiry on the database's clock, which authentication compares it with.
              yield* tx.insertFrom({
                into: "api_keys",
                columns: "name, key_hash, display_prefix, access, expires_at",
                values: sql`${name}, ${key.hash}, ${key.displayPrefix}, ${access}, now() + ${lifetimeMs ?? null}::bigint * interval '1 millisecond'`,
                from: "organizations",
                as: "o",
              });
              const row = yield* orDieButOutage(tx.one<{ id: string }>({ columns: "k.id", from: "api_keys", as: "k", where: sql`k.key_hash = ${key.hash}` }));
              return { id: Number(row.id), key: key.secret };
            })),
        roll: (scope: OrgScope, id: number, overlapMs: number) =>
          orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              const old = yield* tx.one<{ name: string; access: Access; lifetime_ms: number | null; live: boolean; replaced_by: string | null }>({
                columns: `k.name, k.access, (extract(epoch from k.expires_at - k.created_at) * 1000)::float8 as lifetime_ms,
                  ${LIVE} as live, k.replaced_by`,
                from: "api_keys",
                as: "k",
                where: sql`k.id = ${id}`,
                rest: sql`for update`,
              });
              if (old.replaced_by !== null) return yield* new InvalidTransition({ message: "This key was already rolled: roll its replacement instead" });
              if (!old.live) return yield* new InvalidTransition({ message: "A revoked or expired key cannot be rolled: create a new key instead" });
              const key = generateApiKey(old.access, yield* environmentOf(tx));
              const lifetime = old.lifetime_ms === null ? null : Math.round(old.lifetime_ms);
              yield* tx.insertFrom({
                into: "api_keys",
                columns: "name, key_hash, display_prefix, access, expires_at",
                values: sql`k.name, ${key.hash}, ${key.displayPrefix}, k.access, now() + ${lifetime}::bigint * interval '1 millisecond'`,
                from: "api_keys",
                as: "k",
                where: sql`k.id = ${id}`,
              });
              const created = yield* tx.one<{ id: string }>({ columns: "k.id", from: "api_keys", as: "k", where: sql`k.key_hash = ${key.hash}` });
              const [ended] = yield* tx.update<{ expires_at: string }>({
                table: "api_keys",
                as: "k",
                set: sql`replaced_by = ${Number(created.id)},
                  expires_at = least(coalesce(k.expires_at, 'infinity'::timestamptz), now() + ${overlapMs}::bigint * interval '1 millisecond')`,
                where: sql`k.id = ${id}`,
                returning: `${isoTimestamp("k.expires_at")} as expires_at`,
              });
              return { id: Number(created.id), key: key.secret, replaced: id, old_key_expires_at: ended!.expires_at };
            })),
        revoke: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const org = orgSql(database, scope);
          const [row] = yield* org.update<{ id: string }>({
            table: "api_keys",
            as: "k",
            set: sql`revoked_at = now()`,
            where: sql`k.id = ${id} and k.revoked_at is null`,
            returning: "k.id",
          });
          // Revoked before (it keeps its first time), or not the scope's key at all.
          if (row === undefined) yield* org.one({ columns: "k.id", from: "api_keys", as: "k", where: sql`k.id = ${id}` });
          return { id, changed: row !== undefined };
        }),
        list: Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<KeyViewRow>({ columns: VIEW_COLUMNS, from: "api_keys", as: "k", rest: sql`order by k.id` });
          return rows.map(toView);
        }),
        find: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          return toView(yield* orgSql(database, scope).one<KeyViewRow>({ columns: VIEW_COLUMNS, from: "api_keys", as: "k", where: sql`k.id = ${id}` }));
        }),
      });
    }),
  );
}
