import {
  type Access, authenticatedScope, generateApiKey, hashApiKey, NotFound, type OrgScope, Unauthenticated,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { ApiKeyEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, sql } from "../org-sql.ts";
import { traced } from "../traced.ts";

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
}

const VIEW_COLUMNS = `k.id, k.name, k.access, k.display_prefix as prefix, ${isoTimestamp("k.created_at")} as created_at,
  ${isoTimestamp("k.last_used_at")} as last_used_at, ${isoTimestamp("k.revoked_at")} as revoked_at`;
type KeyViewRow = Omit<ApiKeyView, "id"> & { id: string };
const toView = (row: KeyViewRow): ApiKeyView => ({ ...row, id: Number(row.id) });

/** `last_used_at` is written at most once a minute per key and process: authentication stays one read. */
const LAST_USED_RESOLUTION_MS = 60_000;

export class ApiKeyRepository extends Context.Service<
  ApiKeyRepository,
  {
    /** The scope of a live key, or `Unauthenticated`. The only maker of request scopes. */
    readonly authenticate: (secret: string) => Effect.Effect<AuthenticatedKey, Unauthenticated>;
    /**
     * Notes that the scope's key writes now (the API, before a create, when reads may go to
     * replicas): its reads go to the primary for the read-your-writes window after it.
     */
    readonly recordWrite: (scope: OrgScope) => Effect.Effect<void>;
    /** A new key with `name` (what its organization calls it); its secret is returned this once. */
    readonly create: (scope: OrgScope, access: Access, name?: string) => Effect.Effect<{ readonly id: number; readonly key: string }>;
    /** Revokes a key at once; revoking it again is harmless and changes nothing (`changed` false). */
    readonly revoke: (scope: OrgScope, id: number) => Effect.Effect<{ readonly id: number; readonly changed: boolean }, NotFound>;
    /** The organization's keys, oldest first. */
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<ApiKeyView>>;
    /** One of the organization's keys; `NotFound` for another organization's. */
    readonly find: (scope: OrgScope, id: number) => Effect.Effect<ApiKeyView, NotFound>;
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
      return ApiKeyRepository.of({
        authenticate: traced("ApiKeyRepository.authenticate")(Effect.fnUntraced(function* (secret: string) {
          // Before a scope exists: the key's hash is the only thing that selects the organization.
          const [row] = yield* database.rows<KeyRow>(
            `select k.id, k.organization_id, k.access, o.currency,
               (extract(epoch from now() - k.wrote_at) * 1000)::float8 as since_write_ms
             from api_keys k
             join organizations o on o.id = k.organization_id
             where k.key_hash = ? and k.revoked_at is null`,
            [hashApiKey(secret)],
          );
          if (row === undefined) return yield* new Unauthenticated();
          const scope = authenticatedScope({
            organizationId: Number(row.organization_id),
            access: row.access,
            currency: row.currency,
            apiKeyId: Number(row.id),
          });
          touch(scope);
          return { scope, msSinceWrite: row.since_write_ms ?? undefined };
        })),
        recordWrite: traced("ApiKeyRepository.recordWrite")((scope: OrgScope) =>
          Effect.asVoid(orgSql(database, scope).update({
            table: "api_keys",
            as: "k",
            set: sql`wrote_at = now()`,
            where: sql`k.id = ${scope.apiKeyId}`,
          }))),
        create: traced("ApiKeyRepository.create")(Effect.fnUntraced(function* (scope: OrgScope, access: Access, name = "") {
          const key = generateApiKey(access);
          const id = yield* orgSql(database, scope).insert(ApiKeyEntity, {
            name,
            keyHash: key.hash,
            displayPrefix: key.displayPrefix,
            access,
          });
          return { id, key: key.secret };
        })),
        revoke: traced("ApiKeyRepository.revoke")(Effect.fnUntraced(function* (scope: OrgScope, id: number) {
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
        })),
        list: traced("ApiKeyRepository.list")(Effect.fnUntraced(function* (scope: OrgScope) {
          const rows = yield* orgSql(database, scope).select<KeyViewRow>({ columns: VIEW_COLUMNS, from: "api_keys", as: "k", rest: sql`order by k.id` });
          return rows.map(toView);
        })),
        find: traced("ApiKeyRepository.find")(Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          return toView(yield* orgSql(database, scope).one<KeyViewRow>({ columns: VIEW_COLUMNS, from: "api_keys", as: "k", where: sql`k.id = ${id}` }));
        })),
      });
    }),
  );
}
