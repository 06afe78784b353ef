import { type Access, generateApiKey, InvalidInput, isCurrencyCode, NotFound } from "@platter/domain";
import { Effect } from "effect";
import type { Orm } from "./database.ts";
import { ApiKeyEntity, OrganizationEntity } from "./entities/index.ts";

/**
 * Operator actions: creating organizations and keys, revoking keys. Used by the CLI and by tests;
 * they act across organizations by design, so they are not reachable from the public API.
 */

/** Creates an organization; `currency` must be an ISO 4217 code. */
export const createOrganization = (orm: Orm, fields: { name: string; currency: string }) => {
  const name = fields.name.trim();
  if (name === "") return Effect.fail(new InvalidInput({ message: "name must not be empty" }));
  if (!isCurrencyCode(fields.currency)) {
    return Effect.fail(new InvalidInput({ message: `currency must be an ISO 4217 code such as EUR, got "${fields.currency}"` }));
  }
  return Effect.promise(async () => ({
    id: Number(await orm.em.fork().insert(OrganizationEntity, { name, currency: fields.currency })),
  }));
};

/** Creates a key for an organization. The secret is returned once and never stored. */
export const createApiKey = (orm: Orm, organizationId: number, access: Access) =>
  Effect.flatMap(
    Effect.promise(() => orm.em.fork().count(OrganizationEntity, { id: organizationId })),
    (found) => {
      if (found === 0) return Effect.fail(new NotFound());
      const key = generateApiKey(access);
      return Effect.promise(async () => ({
        id: Number(
          await orm.em.fork().insert(ApiKeyEntity, {
            organizationId,
            keyHash: key.hash,
            displayPrefix: key.displayPrefix,
            access,
          }),
        ),
        key: key.secret,
      }));
    },
  );

/** Revokes a key at once; revoking it again is harmless. */
export const revokeApiKey = (orm: Orm, keyId: number) =>
  Effect.flatMap(
    Effect.promise(() =>
      orm.em.getConnection().execute<{ id: string }[]>(
        "update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ? returning id",
        [keyId],
      ),
    ),
    (rows) => (rows.length === 0 ? Effect.fail(new NotFound()) : Effect.succeed({ id: keyId })),
  );
