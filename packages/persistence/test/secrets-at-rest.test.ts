import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { endpointSecretContext, generateSecretKey, generateSigningSecret, makeSecretCipher, parseSecretKeys, type SecretKey, SecretUnreadable } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeveloperSessions, LocalListeners, openPlatform, type PlatformRuntime, WebhookEndpointRepository } from "../src/index.ts";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { StoredSecretsResealing } from "../src/operator.ts";
import { localSecretKeys, LOCAL_SECRET_KEYS_FILE } from "../src/stored-secrets.ts";
import {
  createOrganization, createTestDatabase, nothingHeld, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase,
  testDeliveryPolicy,
} from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * Signing secrets (endpoints', rotated ones, listeners') and session form secrets are stored sealed:
 * no table holds one in clear, a copy of the database without the key signs nothing, a second key
 * takes over by re-sealing, and a database from before sealing is sealed at the next start.
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Sealed Caterers");
});
afterAll(() => db?.dispose());

/** Every row of the tables that hold secrets, as PostgreSQL prints them. */
const storedRows = async (): Promise<string> => {
  const rows = await db.orm.em.getConnection().execute<{ line: string }[]>(
    "select t::text as line from webhook_endpoints t union all select s::text from developer_sessions s",
  );
  return rows.map((row) => row.line).join("\n");
};

/** The secret and its key part (the base64 after `whsec_`), neither of which may be stored. */
const forms = (secret: string) => [secret, secret.replace(/^whsec_/, "")];

const sql = <Row>(text: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(text, params);

/** A platform on the test database with `secretKeys` (as a process with those keys would open it). */
const platformWith = (secretKeys: ReadonlyArray<SecretKey> | undefined): Promise<PlatformRuntime> =>
  openPlatform({ databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 2, secretKeys, ...TEST_DATABASE_LIMITS });

const keyOf = (id: string): SecretKey => generateSecretKey(id).key;

describe("secrets at rest", () => {
  it("holds no secret in clear after a create, a roll, a listener's opening and a sign-in; each reads back as given", async () => {
    const known = await db.run(Effect.gen(function* () {
      const endpoints = yield* WebhookEndpointRepository;
      const created = yield* endpoints.add(org.scope, "https://example.com/sealed", [], generateSigningSecret());
      const rolled = yield* endpoints.rotateSecret(org.scope, created.id, 3600_000, generateSigningSecret());
      const revealed = yield* endpoints.secret(org.scope, created.id);
      const listener = yield* (yield* LocalListeners).open({ ...org.scope, apiKeyId: org.writeKeyId }, { forwardTo: "http://localhost:4000/hook", eventTypes: [] }, 60_000, 5);
      const sessions = yield* DeveloperSessions;
      const link = yield* sessions.createLink(org.scope, "cli");
      const session = yield* sessions.signIn(link.token);
      const actor = yield* sessions.authenticate(session.token);
      return { created, rolled, revealed, listener, formSecret: actor.formSecret };
    }));
    expect(known.revealed.secret).toBe(known.rolled.secret);
    expect(known.formSecret.length).toBeGreaterThan(20);
    const stored = await storedRows();
    for (const secret of [known.created.secret, known.rolled.secret, known.listener.secret]) {
      for (const form of forms(secret)) expect(stored).not.toContain(form);
    }
    expect(stored).not.toContain(known.formSecret);
    const columns = await sql<{ secret: string; previous_secret: string | null }>("select secret, previous_secret from webhook_endpoints where id = ?", [known.created.id]);
    expect(columns[0]!.secret).toMatch(/^v1:test:[\w-]+:[\w-]+$/);
    expect(columns[0]!.previous_secret).toMatch(/^v1:test:/);
  });

  it("hands the dispatcher the secrets as they were given, the rotated one beside the new one", async () => {
    const { created, rolled, due } = await db.run(Effect.gen(function* () {
      const endpoints = yield* WebhookEndpointRepository;
      const created = yield* endpoints.add(org.scope, "https://example.com/dispatched", [], generateSigningSecret());
      const rolled = yield* endpoints.rotateSecret(org.scope, created.id, 3600_000, generateSigningSecret());
      yield* createClient(org.scope, { name: "Ada" });
      const due = (yield* (yield* DeliveryQueue).claimDue(100, 60_000, testDeliveryPolicy, nothingHeld)).due;
      return { created, rolled, due };
    }));
    const delivery = due.find((d) => d.endpointId === created.id)!;
    expect({ secret: delivery.secret, previousSecret: delivery.previousSecret }).toEqual({ secret: rolled.secret, previousSecret: created.secret });
  });

  it.each([
    ["another key under the same id", [{ id: "test", key: keyOf("test").key }], /this database knows another key under that id/],
    ["another key id", [keyOf("other")], /sealed with key "test", which SECRET_ENCRYPTION_KEYS does not hold/],
  ])("refuses to start with %s: a copy of the database without the key signs nothing", async (_, keys, message) => {
    await expect(platformWith(keys)).rejects.toThrow(message);
  });

  it("refuses to start on a configured database without SECRET_ENCRYPTION_KEYS, saying so", async () => {
    await expect(platformWith(undefined)).rejects.toThrow(/SECRET_ENCRYPTION_KEYS is not set/);
  });

  it("fails the GCM check for a wrong key and for a value moved to another endpoint or organization", () => {
    const cipher = makeSecretCipher(TEST_SECRET_KEYS);
    const sealed = cipher.seal("whsec_abc", endpointSecretContext(1, 2));
    expect(cipher.open(sealed, endpointSecretContext(1, 2))).toBe("whsec_abc");
    expect(() => makeSecretCipher([{ id: "test", key: keyOf("x").key }]).open(sealed, endpointSecretContext(1, 2))).toThrow(SecretUnreadable);
    expect(() => cipher.open(sealed, endpointSecretContext(1, 3))).toThrow(SecretUnreadable);
    expect(() => cipher.open(sealed, endpointSecretContext(9, 2))).toThrow(SecretUnreadable);
    expect(() => cipher.open("whsec_abc", endpointSecretContext(1, 2))).toThrow(SecretUnreadable);
  });

  it("rotates keys: old rows open beside a new first key, re-sealing moves them to it, then the old key may go", async () => {
    const revealAll = (platform: PlatformRuntime) =>
      platform.runPromise(Effect.gen(function* () {
        const endpoints = yield* WebhookEndpointRepository;
        const ids = (yield* endpoints.list(org.scope)).map((endpoint) => endpoint.id);
        return yield* Effect.forEach(ids, (id) => Effect.map(endpoints.secret(org.scope, id), (s) => s.secret));
      }));
    const before = await db.run(Effect.gen(function* () {
      const endpoints = yield* WebhookEndpointRepository;
      yield* endpoints.add(org.scope, "https://example.com/rotated-key", [], generateSigningSecret());
      return yield* Effect.forEach((yield* endpoints.list(org.scope)).map((e) => e.id), (id) => Effect.map(endpoints.secret(org.scope, id), (s) => s.secret));
    }));
    const fresh = keyOf("fresh");
    const both = await platformWith([fresh, ...TEST_SECRET_KEYS]);
    try {
      expect(await revealAll(both)).toEqual(before);
      const counts = await both.runPromise(StoredSecretsResealing.use((s) => s.reseal()));
      expect(counts.keyId).toBe("fresh");
      expect(counts.endpointSecrets).toBeGreaterThanOrEqual(before.length);
      expect(counts.sessionFormSecrets).toBeGreaterThanOrEqual(1);
    } finally {
      await both.dispose();
    }
    const keyIds = await sql<{ key_id: string }>(
      `select distinct split_part(v, ':', 2) as key_id from (select secret as v from webhook_endpoints union all
         select previous_secret from webhook_endpoints where previous_secret is not null union all select form_secret from developer_sessions) s`,
    );
    expect(keyIds).toEqual([{ key_id: "fresh" }]);
    const onlyNew = await platformWith([fresh]);
    try {
      expect(await revealAll(onlyNew)).toEqual(before);
    } finally {
      await onlyNew.dispose();
    }
    // Back to the test key for the other tests.
    const back = await platformWith([...TEST_SECRET_KEYS, fresh]);
    await back.runPromise(StoredSecretsResealing.use((s) => s.reseal())).finally(() => back.dispose());
  });

  it("seals a database from before sealing at the next start: the plaintext rows become sealed, reading as they were", async () => {
    const plain = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    const [row] = await sql<{ id: string }>(
      "insert into webhook_endpoints (organization_id, url, origin, secret, previous_secret, previous_secret_until, event_types) values (?, 'https://example.com/old', 'https://example.com', ?, ?, now() + interval '1 hour', '{}') returning id",
      [org.id, plain, `${plain}-previous`],
    );
    await sql("update developer_sessions set form_secret = 'plain-form-secret' where organization_id = ?", [org.id]);
    const upgraded = await platformWith(TEST_SECRET_KEYS);
    try {
      expect(await upgraded.runPromise(WebhookEndpointRepository.use((r) => r.secret(org.scope, Number(row!.id))))).toMatchObject({ secret: plain });
    } finally {
      await upgraded.dispose();
    }
    const stored = await storedRows();
    for (const form of [...forms(plain), "plain-form-secret"]) expect(stored).not.toContain(form);
    const [clear] = await sql<{ n: number }>(
      `select count(*)::int as n from webhook_endpoints where secret not like 'v1:%' or previous_secret not like 'v1:%'`,
    );
    expect(clear!.n).toBe(0);
  });
});

describe("a claim holding a secret this process cannot open", () => {
  it("sends the rest of the claim and leaves that delivery unsent under its lease, for a process holding the key", async () => {
    const ours = await createOrganization(db, "Keyed Caterers");
    const theirs = await createOrganization(db, "Elsewhere Caterers");
    const endpoints = await db.run(Effect.gen(function* () {
      const repository = yield* WebhookEndpointRepository;
      return [yield* repository.add(ours.scope, "https://example.com/keyed", [], generateSigningSecret()), yield* repository.add(theirs.scope, "https://example.com/elsewhere", [], generateSigningSecret())] as const;
    }));
    // Sealed by a process with a key this one lacks (a key added elsewhere first, mid-rotation).
    const elsewhere = makeSecretCipher([keyOf("elsewhere")]);
    await sql("update webhook_endpoints set secret = ? where id = ?", [elsewhere.seal(endpoints[1].secret, endpointSecretContext(theirs.id, endpoints[1].id)), endpoints[1].id]);
    await sql("update webhook_deliveries set status = 'succeeded', completed_at = now() where status = 'pending'");
    const claimed = await db.run(Effect.gen(function* () {
      yield* createClient(ours.scope, { name: "Ada" });
      yield* createClient(theirs.scope, { name: "Bo" });
      return yield* (yield* DeliveryQueue).claimDue(100, 60_000, { ...testDeliveryPolicy, retryScheduleMs: [0, 0] }, nothingHeld);
    }));
    expect(claimed.due.map((d) => [d.endpointId, d.secret])).toEqual([[endpoints[0].id, endpoints[0].secret]]);
    expect(claimed.unopened).toBe(1);
    const [left] = await sql<{ status: string; leased: boolean }>(
      "select status, lease_expires_at > now() as leased from webhook_deliveries where endpoint_id = ?", [endpoints[1].id],
    );
    expect(left).toEqual({ status: "pending", leased: true });
    // Sealed again with the test key, as the other tests' starts expect.
    await sql("update webhook_endpoints set secret = ? where id = ?", [makeSecretCipher(TEST_SECRET_KEYS).seal(endpoints[1].secret, endpointSecretContext(theirs.id, endpoints[1].id)), endpoints[1].id]);
  });
});

describe("the embedded database's key", () => {
  it("is made once beside its data, readable by its user only, and read back at the next start", async () => {
    const dir = await mkdtemp(join(tmpdir(), "platter-keys-"));
    try {
      const first = await localSecretKeys(dir);
      const again = await localSecretKeys(dir);
      expect(first.created).toBe(true);
      expect(again.created).toBe(false);
      expect(again.keys).toEqual(first.keys.map((key) => ({ id: key.id, key: Buffer.from(key.key) })));
      expect((await stat(join(dir, LOCAL_SECRET_KEYS_FILE))).mode & 0o777).toBe(0o600);
      expect(parseSecretKeys((await readFile(join(dir, LOCAL_SECRET_KEYS_FILE), "utf8")).trim())).toEqual(again.keys);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("SECRET_ENCRYPTION_KEYS as written", () => {
  it.each([
    ["", /at least one key/],
    ["nokey", /entry 1 must be <id>:<base64/],
    ["a:c2hvcnQ=", /key "a" must be 32 bytes/],
    [`a:${Buffer.alloc(32).toString("base64")},a:${Buffer.alloc(32).toString("base64")}`, /given twice/],
    [`bad id:${Buffer.alloc(32).toString("base64")}`, /entry 1 must be/],
  ])("refuses %j", (text, message) => {
    expect(parseSecretKeys(text)).toMatch(message);
  });
});
