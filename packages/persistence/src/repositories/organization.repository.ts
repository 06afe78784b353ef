import {
  type Access, ApiKeyRepository, authenticatedScope, hashApiKey, OrganizationRepository, type OrgScope,
  Unauthenticated,
} from "@platter/domain";
import { Effect, Layer } from "effect";
import type { Orm } from "../database.ts";
import { isoTimestamp, queryRows, scopedSql } from "../scoped-sql.ts";

/** Organizations and API-key authentication. */

interface KeyRow {
  id: string;
  organization_id: string;
  access: Access;
  currency: string;
}

/** `last_used_at` is written at most once a minute per key and process: auth stays one read. */
const LAST_USED_RESOLUTION_MS = 60_000;

export const makeApiKeyRepository = (orm: Orm): ApiKeyRepository["Service"] => {
  const lastWritten = new Map<number, number>();
  const touch = (keyId: number) => {
    const now = Date.now();
    if (now - (lastWritten.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    lastWritten.set(keyId, now);
    // Fire and forget: a lost timestamp must never fail the request it describes.
    orm.em.getConnection().execute("update api_keys set last_used_at = now() where id = ?", [keyId]).catch(() => {});
  };
  return {
    authenticate: (secret) =>
      Effect.flatMap(
        Effect.promise(() =>
          queryRows<KeyRow>(
            orm,
            `select k.id, k.organization_id, k.access, o.currency from api_keys k
             join organizations o on o.id = k.organization_id
             where k.key_hash = ? and k.revoked_at is null`,
            [hashApiKey(secret)],
          ),
        ),
        ([row]) => {
          if (row === undefined) return Effect.fail(new Unauthenticated());
          const apiKeyId = Number(row.id);
          touch(apiKeyId);
          return Effect.succeed(
            authenticatedScope({ organizationId: Number(row.organization_id), access: row.access, currency: row.currency, apiKeyId }),
          );
        },
      ),
  };
};

interface OrganizationRow {
  id: string;
  name: string;
  currency: string;
  created_at: string;
}

export const makeOrganizationRepository = (orm: Orm): OrganizationRepository["Service"] => ({
  current: (scope: OrgScope) =>
    Effect.map(
      scopedSql(orm, scope).one<OrganizationRow>(
        `select o.id, o.name, o.currency, ${isoTimestamp("o.created_at")} as created_at from organizations o where o.id = ?`,
      ),
      (row) => ({ id: Number(row.id), name: row.name, currency: row.currency, created_at: row.created_at }),
    ),
});

export const ApiKeyRepositoryLive = (orm: Orm) => Layer.succeed(ApiKeyRepository, makeApiKeyRepository(orm));
export const OrganizationRepositoryLive = (orm: Orm) =>
  Layer.succeed(OrganizationRepository, makeOrganizationRepository(orm));
