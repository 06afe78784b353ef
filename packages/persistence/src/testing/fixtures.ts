import { operatorScope, type OrgScope } from "@platter/domain";
import { Effect } from "effect";
import type { Orm } from "../database.ts";
import { createApiKey, createOrganization as createOrg } from "../operator.ts";

/** Test fixtures: organizations and keys, created the way the CLI creates them. */

export interface OrganizationFixture {
  readonly id: number;
  readonly scope: OrgScope;
  readonly readKey: string;
  readonly writeKey: string;
  readonly readKeyId: number;
  readonly writeKeyId: number;
}

/** An organization with one read-only and one read/write key. */
export const createOrganization = async (orm: Orm, name = "Test Catering", currency = "EUR"): Promise<OrganizationFixture> => {
  const { id } = await Effect.runPromise(createOrg(orm, { name, currency }));
  const read = await Effect.runPromise(createApiKey(orm, id, "read"));
  const write = await Effect.runPromise(createApiKey(orm, id, "read_write"));
  return { id, scope: operatorScope(id, currency), readKey: read.key, writeKey: write.key, readKeyId: read.id, writeKeyId: write.id };
};
