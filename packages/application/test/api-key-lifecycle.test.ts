import { type Actor, operatorActor } from "@platter/domain";
import { ApiKeyRepository, type Persistence } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect, Exit } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeys } from "../src/index.ts";

/**
 * A key's life: it may expire, and it may be rolled (a new secret; the old one works for the
 * overlap, then is refused like an unknown key). Time is moved by moving rows.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let other: OrganizationFixture;
let operator: Actor;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Lifecycle Catering");
  other = await createOrganization(db, "Other Catering");
  operator = operatorActor(org.scope, "root via the CLI");
});
afterAll(() => db?.dispose());

const HOUR_MS = 3600_000;
const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
/** Whether `secret` authenticates now. */
const works = async (secret: string) => Exit.isSuccess(await db.run(Effect.exit(ApiKeyRepository.use((keys) => keys.authenticate(secret)))));
const failureOf = <E>(program: Effect.Effect<unknown, E, Persistence>) => db.run(Effect.flip(program));
/** Moves a key's expiry into the past, as time passing would. */
const expire = (id: number) => rows("update api_keys set expires_at = now() - interval '1 second' where id = ?", [id]);

describe("key expiry", () => {
  it("stores the expiry on the database's clock and refuses the key once it has passed", async () => {
    const key = await db.run(ApiKeys.create(operator, "read", "Expiring", 30 * 24 * HOUR_MS));
    const [row] = await rows<{ days: number }>("select round(extract(epoch from expires_at - now()) / 86400)::int as days from api_keys where id = ?", [key.id]);
    expect(row!.days).toBe(30);
    expect(await works(key.key)).toBe(true);
    const view = await db.run(ApiKeys.find(operator, key.id));
    expect(view).toMatchObject({ expired: false, replaced_by: null });
    expect(view.expires_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    await expire(key.id);
    expect(await works(key.key)).toBe(false);
    expect(await db.run(ApiKeys.find(operator, key.id))).toMatchObject({ expired: true });
  });

  it("keeps a key without an expiry working", async () => {
    const key = await db.run(ApiKeys.create(operator, "read", "Forever"));
    expect((await db.run(ApiKeys.find(operator, key.id))).expires_at).toBeNull();
    expect(await works(key.key)).toBe(true);
  });
});

describe("rolling a key", () => {
  it("makes a new key like the old one and keeps the old one working for the overlap only, audited", async () => {
    const old = await db.run(ApiKeys.create(operator, "read_write", "Booking form", 90 * 24 * HOUR_MS));
    const rolled = await db.run(ApiKeys.roll(operator, old.id, 24 * HOUR_MS));
    expect(rolled.replaced).toBe(old.id);
    expect(rolled.key).not.toBe(old.key);
    expect(await works(old.key)).toBe(true);
    expect(await works(rolled.key)).toBe(true);
    const [replacement] = await rows<{ name: string; access: string; days: number; organization_id: string }>(
      "select name, access, round(extract(epoch from expires_at - now()) / 86400)::int as days, organization_id from api_keys where id = ?", [rolled.id],
    );
    expect(replacement).toEqual({ name: "Booking form", access: "read_write", days: 90, organization_id: String(org.id) });
    const [ended] = await rows<{ hours: number; replaced_by: string }>(
      "select round(extract(epoch from expires_at - now()) / 3600)::int as hours, replaced_by from api_keys where id = ?", [old.id],
    );
    expect(ended).toEqual({ hours: 24, replaced_by: String(rolled.id) });
    expect(await rows("select action, operator from audit_log where subject = ?", [`api_key ${old.id}`])).toEqual([
      { action: "api_key.created", operator: "root via the CLI" },
      { action: "api_key.rolled", operator: "root via the CLI" },
    ]);
    // The overlap ends: the old key is refused, the new one goes on.
    await expire(old.id);
    expect(await works(old.key)).toBe(false);
    expect(await works(rolled.key)).toBe(true);
  });

  it("with no overlap, stops the old key at once", async () => {
    const old = await db.run(ApiKeys.create(operator, "read", "Leaked"));
    const rolled = await db.run(ApiKeys.roll(operator, old.id, 0));
    expect(await works(old.key)).toBe(false);
    expect(await works(rolled.key)).toBe(true);
  });

  it("never lets the overlap outlive the old key's own expiry", async () => {
    const old = await db.run(ApiKeys.create(operator, "read", "Short-lived", 2 * HOUR_MS));
    const rolled = await db.run(ApiKeys.roll(operator, old.id, 7 * 24 * HOUR_MS));
    const [ended] = await rows<{ hours: number }>("select round(extract(epoch from expires_at - now()) / 3600)::int as hours from api_keys where id = ?", [old.id]);
    expect(ended!.hours).toBe(2);
    expect(Date.parse(rolled.old_key_expires_at) - Date.now()).toBeLessThan(3 * HOUR_MS);
  });

  it.each([
    ["revoked", async (id: number) => void (await db.run(ApiKeys.revoke(operator, id)))],
    ["expired", expire],
    ["already rolled", async (id: number) => void (await db.run(ApiKeys.roll(operator, id, HOUR_MS)))],
  ])("refuses a key that is %s, writing nothing", async (_state, makeIt) => {
    const key = await db.run(ApiKeys.create(operator, "read", "Not rollable"));
    await makeIt(key.id);
    const before = await rows("select count(*)::int as keys, (select count(*)::int from audit_log) as audit from api_keys");
    const refusal = await failureOf(ApiKeys.roll(operator, key.id, HOUR_MS));
    expect(refusal._tag).toBe("InvalidTransition");
    expect(await rows("select count(*)::int as keys, (select count(*)::int from audit_log) as audit from api_keys")).toEqual(before);
  });

  it("cannot roll another organization's key (NotFound), and writes nothing", async () => {
    const before = await rows("select id, expires_at, replaced_by from api_keys where organization_id = ? order by id", [other.id]);
    const refusal = await failureOf(ApiKeys.roll(operator, other.readKeyId, HOUR_MS));
    expect(refusal._tag).toBe("NotFound");
    expect(await rows("select id, expires_at, replaced_by from api_keys where organization_id = ? order by id", [other.id])).toEqual(before);
    expect(await works(other.readKey)).toBe(true);
  });
});
