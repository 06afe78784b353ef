import { type Access, generateApiKey, operatorScope, type OrgScope } from "@platter/domain";
import { ApiKeyEntity, OrganizationEntity } from "../entities/index.ts";
import type { Orm } from "../database.ts";

/** Test fixtures: organizations and keys created the way the CLI creates them. */

export interface OrganizationFixture {
  readonly id: number;
  readonly scope: OrgScope;
  readonly readKey: string;
  readonly writeKey: string;
}

/** Inserts an API key and returns its secret. */
export const createApiKey = async (orm: Orm, organizationId: number, access: Access): Promise<{ id: number; secret: string }> => {
  const key = generateApiKey(access);
  const id = Number(
    await orm.em.fork().insert(ApiKeyEntity, {
      organizationId,
      keyHash: key.hash,
      displayPrefix: key.displayPrefix,
      access,
    }),
  );
  return { id, secret: key.secret };
};

/** An organization with one read-only and one read/write key. */
export const createOrganization = async (orm: Orm, name = "Test Catering", currency = "EUR"): Promise<OrganizationFixture> => {
  const id = Number(await orm.em.fork().insert(OrganizationEntity, { name, currency }));
  const readKey = (await createApiKey(orm, id, "read")).secret;
  const writeKey = (await createApiKey(orm, id, "read_write")).secret;
  return { id, scope: operatorScope(id, currency), readKey, writeKey };
};
