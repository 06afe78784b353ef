import { type ApiKeyLimitReached, operatorActor } from "@platter/domain";
import { Effect, Result } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository } from "@platter/persistence";
import { ApiKeys } from "../src/index.ts";
import { createOrganization, createTestDatabase, raceThroughHeldInserts, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * The cap on an organization's working API keys, decided by `ApiKeys.create` over the store's locked count: revoked,
 * expired and rolled-out keys do not count, a refusal writes nothing, another organization's keys
 * do not count, and concurrent creates cannot both take the last place (the organization's row is
 * locked in the creating transaction).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const keysOf = async (org: OrganizationFixture) =>
  (await rows<{ n: number }>("select count(*)::int as n from api_keys where organization_id = ?", [org.id]))[0]!.n;
const create = (org: OrganizationFixture, limit?: number) =>
  db.run(ApiKeys.create(operatorActor(org.scope, "limit test"), "read", "", undefined, limit).pipe(Effect.result));

describe("the cap on API keys per organization", () => {
  it("refuses the key beyond it with a message to show, writes nothing, and counts only working keys", async () => {
    // The fixture's organization has two keys.
    const org = await createOrganization(db, "Capped");
    const third = Result.getOrThrow(await create(org, 3));
    const refused = await create(org, 3);
    const failure = Result.merge(refused) as ApiKeyLimitReached;
    expect(failure._tag).toBe("ApiKeyLimitReached");
    expect(failure.limit).toBe(3);
    expect(failure.message).toBe(
      "This organization already has 3 working API keys, the most it may have (revoked, expired and rolled ones do not count). Revoke one it no longer uses, or ask your Platter contact to raise the limit.",
    );
    expect(await keysOf(org)).toBe(3);
    // A rolled key's successor stands for it: rolling at the cap is allowed, and the count stays.
    Result.getOrThrow(await db.run(ApiKeyRepository.use((keys) => keys.roll(org.scope, third.id, 3_600_000)).pipe(Effect.result)));
    expect(Result.isFailure(await create(org, 3))).toBe(true);
    // A revoked key and an expired key free their places.
    await db.run(ApiKeyRepository.use((keys) => keys.revoke(org.scope, org.readKeyId)));
    Result.getOrThrow(await create(org, 3));
    await rows("update api_keys set expires_at = now() - interval '1 second' where id = ?", [org.writeKeyId]);
    Result.getOrThrow(await create(org, 3));
    expect(Result.isFailure(await create(org, 3))).toBe(true);
  });

  it("counts each organization's own keys only", async () => {
    const full = await createOrganization(db, "Full");
    const other = await createOrganization(db, "Other");
    expect(Result.isFailure(await create(full, 2))).toBe(true);
    expect(Result.getOrThrow(await create(other, 3)).key).toMatch(/^platter_/);
  });

  it("lets exactly one of many concurrent creates take the last place", async () => {
    const org = await createOrganization(db, "Racing");
    const limit = 3;
    // Every insert waits until the pool's five connections are all busy creating: without the
    // organization's row lock, all five would have counted two keys by then, and would all insert.
    const outcomes = await raceThroughHeldInserts(db, "api_keys", Array.from({ length: 12 }, () => () => create(org, limit)));
    expect(outcomes.filter(Result.isSuccess)).toHaveLength(1);
    expect(outcomes.filter(Result.isFailure).map((outcome) => (Result.merge(outcome) as ApiKeyLimitReached)._tag)).toEqual(
      Array.from({ length: 11 }, () => "ApiKeyLimitReached"),
    );
    expect(await keysOf(org)).toBe(limit);
  });

  it("defaults to 100 when the caller gives no limit", async () => {
    const org = await createOrganization(db, "Default");
    await rows(
      "insert into api_keys (organization_id, name, key_hash, display_prefix, access) select ?, '', md5(g::text || 'default'), 'platter_x', 'read' from generate_series(1, 97) g",
      [org.id],
    );
    Result.getOrThrow(await create(org));
    expect((Result.merge(await create(org)) as ApiKeyLimitReached).limit).toBe(100);
    expect(await keysOf(org)).toBe(100);
  });
});
