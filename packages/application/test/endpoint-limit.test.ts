import { type EndpointLimitReached, type EndpointUrlTaken, operatorActor } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, raceThroughHeldInserts, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect, Result } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookEndpoints } from "../src/index.ts";

/**
 * The limit on an organization's webhook endpoints, decided by `WebhookEndpoints.register` over the
 * store's locked count (`lockForRegistration`):
 * disabled endpoints count, a refusal writes nothing, another organization's endpoints do not
 * count, and concurrent registrations cannot both take the last slot (the organization's row is
 * locked in the registering transaction).
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const endpointsOf = async (org: OrganizationFixture) =>
  (await rows<{ n: number }>("select count(*)::int as n from webhook_endpoints where organization_id = ?", [org.id]))[0]!.n;
const add = (org: OrganizationFixture, limit: number, url = "https://198.51.100.90/one") =>
  db.run(Effect.result(WebhookEndpoints.register(operatorActor(org.scope, "root via the CLI"), url, [], {
    allowPrivateNetworks: false, secretOverlapMs: 60_000, endpointsPerOrganization: limit,
  })));

describe("the limit on endpoints per organization", () => {
  it("refuses the endpoint beyond the limit, disabled ones counting, with a message to show, and writes nothing", async () => {
    const org = await createOrganization(db, "Limited");
    const first = Result.getOrThrow(await add(org, 3));
    await db.run(WebhookEndpointRepository.use((r) => r.setEnabled(org.scope, first.id, false)));
    Result.getOrThrow(await add(org, 3, "https://198.51.100.90/two"));
    Result.getOrThrow(await add(org, 3, "https://198.51.100.90/three"));
    const refused = await add(org, 3, "https://198.51.100.90/fourth");
    expect(Result.isFailure(refused)).toBe(true);
    const failure = Result.merge(refused) as EndpointLimitReached;
    expect(failure._tag).toBe("EndpointLimitReached");
    expect(failure.limit).toBe(3);
    expect(failure.message).toBe(
      "This organization already has 3 webhook endpoints, the most it may have (disabled ones count). Reuse one of them, or ask your Platter contact to raise the limit.",
    );
    expect(await endpointsOf(org)).toBe(3);
    expect(await rows("select id from webhook_endpoints where url = 'https://198.51.100.90/fourth'")).toEqual([]);
  });

  it("counts each organization's own endpoints only", async () => {
    const full = await createOrganization(db, "Full");
    const other = await createOrganization(db, "Other");
    Result.getOrThrow(await add(full, 1));
    expect(Result.isFailure(await add(full, 1))).toBe(true);
    expect(Result.getOrThrow(await add(other, 1)).secret).toMatch(/^whsec_/);
  });

  it("lets exactly one of many concurrent registrations take the last slot", async () => {
    const org = await createOrganization(db, "Racing");
    const limit = 5;
    for (let i = 0; i < limit - 1; i++) Result.getOrThrow(await add(org, limit, `https://198.51.100.90/${i}`));
    // Every insert waits until the pool's five connections are all busy registering: without the
    // organization's row lock, all five would have counted four endpoints by then, and would all insert.
    const outcomes = await raceThroughHeldInserts(
      db, "webhook_endpoints", Array.from({ length: 12 }, (_, i) => () => add(org, limit, `https://198.51.100.90/race-${i}`)),
    );
    expect(outcomes.filter(Result.isSuccess)).toHaveLength(1);
    expect(outcomes.filter(Result.isFailure).map((outcome) => (Result.merge(outcome) as EndpointLimitReached)._tag)).toEqual(
      Array.from({ length: 11 }, () => "EndpointLimitReached"),
    );
    expect(await endpointsOf(org)).toBe(limit);
  });

  it("refuses a URL the organization already has, however written, naming its endpoint; another organization may have it", async () => {
    const org = await createOrganization(db, "Once");
    const first = Result.getOrThrow(await add(org, 50, "https://198.51.100.91/once"));
    await db.run(WebhookEndpointRepository.use((r) => r.setEnabled(org.scope, first.id, false)));
    for (const written of ["https://198.51.100.91/once", "HTTPS://198.51.100.91:443/once", "https://198.51.100.91/once#top", "https://198.51.100.91/ONCE/"]) {
      const refused = Result.merge(await add(org, 50, written)) as EndpointUrlTaken;
      expect(refused._tag).toBe("EndpointUrlTaken");
      expect(refused.endpointId).toBe(first.id);
      expect(refused.message).toMatch(new RegExp(` is already endpoint ${first.id}: one endpoint per URL \\(compared ignoring case and a trailing slash\\); use that one\\.$`));
    }
    expect(await endpointsOf(org)).toBe(1);
    // Another path or query, or another organization, is another endpoint.
    Result.getOrThrow(await add(org, 50, "https://198.51.100.91/once/more"));
    Result.getOrThrow(await add(org, 50, "https://198.51.100.91/once?to=b"));
    Result.getOrThrow(await add(await createOrganization(db, "Twice"), 50, "https://198.51.100.91/once"));
  });
});
