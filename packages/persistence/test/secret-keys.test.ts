import { endpointSecretContext, generateSecretKey, makeSecretCipher, type SecretKey } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LocalListeners, openPlatform, type PlatformRuntime } from "../src/index.ts";
import { StoredSecretsResealing } from "../src/operator.ts";
import { SEALING_BATCH } from "../src/stored-secrets.ts";
import {
  createOrganization, createTestDatabase, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase,
} from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * The keyring a process starts with is the one that sealed, even before anything is sealed (one
 * check value per key id); `platter secrets reencrypt` re-seals in batches that each commit on their
 * own; a listener whose secret this process cannot open leaves its deliveries leased and unsent, as
 * the dispatcher's claim does.
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Checked Caterers");
});
afterAll(() => db?.dispose());

const sql = <Row>(text: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(text, params);

/** A platform on the test database with `secretKeys`, as a process with those keys would open it. */
const platformWith = (secretKeys: ReadonlyArray<SecretKey>): Promise<PlatformRuntime> =>
  openPlatform({ databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, poolSize: 2, secretKeys, ...TEST_DATABASE_LIMITS });

/** Opens a platform with `secretKeys` and closes it again: a process's start. */
const start = async (secretKeys: ReadonlyArray<SecretKey>): Promise<void> => (await platformWith(secretKeys)).dispose();

const keyOf = (id: string): SecretKey => generateSecretKey(id).key;

describe("a keyring that is not the one that sealed", () => {
  it("is refused on a database where nothing is sealed yet: a different key under a known id, naming the id and what to do", async () => {
    const [stored] = await sql<{ n: number }>(
      "select (select count(*) from webhook_endpoints) + (select count(*) from developer_sessions) as n",
    );
    expect(Number(stored!.n)).toBe(0);
    await expect(start([{ id: "test", key: keyOf("test").key }])).rejects.toThrow(
      /SECRET_ENCRYPTION_KEYS gives key "test", but this database knows another key under that id.*Give "test" the key it had before.*or give a new key a new id/,
    );
  });

  it("is refused for a new key id once a first process used it: two processes with different keys under one new id never both start", async () => {
    const first = keyOf("spring");
    await start([first, ...TEST_SECRET_KEYS]);
    await expect(start([keyOf("spring"), ...TEST_SECRET_KEYS])).rejects.toThrow(/gives key "spring", but this database knows another key under that id/);
    await start([...TEST_SECRET_KEYS, first]);
    expect(await sql("select key_id from secret_key_checks order by key_id")).toEqual([{ key_id: "spring" }, { key_id: "test" }]);
  });

  it("keeps one check value per key id, sealed with that key and holding no key", async () => {
    const checks = await sql<{ key_id: string; check_value: string }>("select key_id, check_value from secret_key_checks where key_id = 'test'");
    expect(checks).toHaveLength(1);
    expect(checks[0]!.check_value).toMatch(/^v1:test:[\w-]+:[\w-]+$/);
  });
});

describe("platter secrets reencrypt", () => {
  const ENDPOINTS = 2 * SEALING_BATCH + 100;

  it("commits batch by batch: while one row is locked, the batches before it are already re-sealed; then it finishes and a second run has nothing left", async () => {
    const sealing = makeSecretCipher(TEST_SECRET_KEYS);
    // Past the endpoint cap (written straight into the table), each sealed for its own row as the stores seal.
    const ids = (await sql<{ id: string }>(
      `insert into webhook_endpoints (organization_id, url, origin, secret, event_types)
       select ?, 'https://example.com/batch/' || n, 'https://example.com', '', '{}' from generate_series(1, ?) n returning id`,
      [org.id, ENDPOINTS],
    )).map((row) => row.id);
    await sql(
      `update webhook_endpoints t set secret = v.value from jsonb_to_recordset(?::jsonb) as v(id bigint, value text) where t.id = v.id`,
      [JSON.stringify(ids.map((id) => ({ id, value: sealing.seal(`whsec_${id}`, endpointSecretContext(org.id, id)) })))],
    );
    const fresh = keyOf("fresh");
    const platform = await platformWith([fresh, ...TEST_SECRET_KEYS]);
    const holder = await db.rawClient();
    try {
      // The last endpoint's row held by another transaction: the pass waits on it in its third batch.
      await holder.query("begin");
      await holder.query("select 1 from webhook_endpoints where id = $1 for update", [ids[ids.length - 1]]);
      const resealing = platform.runPromise(StoredSecretsResealing.use((s) => s.reseal()));
      let waiting = 0;
      for (let tries = 0; tries < 600 && waiting === 0; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const [row] = await sql<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%for update%'",
        );
        waiting = row!.n;
      }
      expect(waiting).toBe(1);
      const [committed] = await sql<{ n: number }>("select count(*)::int as n from webhook_endpoints where secret like 'v1:fresh:%'");
      expect(committed!.n).toBe(2 * SEALING_BATCH);
      await holder.query("commit");
      const counts = await resealing;
      expect(counts).toMatchObject({ keyId: "fresh", endpointSecrets: ENDPOINTS });
      expect(await platform.runPromise(StoredSecretsResealing.use((s) => s.reseal()))).toEqual({ keyId: "fresh", endpointSecrets: 0, sessionFormSecrets: 0 });
    } finally {
      await holder.end();
      await platform.dispose();
    }
    const byKey = await sql<{ key_id: string; n: number }>("select split_part(secret, ':', 2) as key_id, count(*)::int as n from webhook_endpoints group by 1");
    expect(byKey).toEqual([{ key_id: "fresh", n: ENDPOINTS }]);
    // Each still opens to what was sealed, for its own row.
    const [last] = await sql<{ secret: string }>("select secret from webhook_endpoints where id = ?", [ids[ids.length - 1]]);
    expect(makeSecretCipher([fresh]).open(last!.secret, endpointSecretContext(org.id, ids[ids.length - 1]!))).toBe(`whsec_${ids[ids.length - 1]}`);
    // Back to the test key, which the test database's own runtime seals with.
    const back = await platformWith([...TEST_SECRET_KEYS, fresh]);
    await back.runPromise(StoredSecretsResealing.use((s) => s.reseal())).finally(() => back.dispose());
    await sql("delete from webhook_endpoints where url like 'https://example.com/batch/%'");
  });
});

describe("a listener whose secret this process cannot open", () => {
  it("is refused its stream with SecretKeyUnavailable, and a claim leaves its delivery leased and unsent, as the dispatcher's does", async () => {
    const request = { forwardTo: "http://localhost:4000/hook", eventTypes: [] };
    const scope = { ...org.scope, apiKeyId: org.writeKeyId };
    const listener = await db.run(LocalListeners.use((l) => l.open(scope, request, 60_000, 5)));
    await db.run(createClient(org.scope, { name: "Ada" }));
    const elsewhere = makeSecretCipher([keyOf("elsewhere")]);
    await sql("update webhook_endpoints set secret = ? where id = ?", [elsewhere.seal(listener.secret, endpointSecretContext(org.id, listener.id)), listener.id]);
    expect(await db.run(LocalListeners.use((l) => l.claim(scope, listener, 60_000)))).toEqual([]);
    const [left] = await sql<{ status: string; leased: boolean }>(
      "select status, lease_expires_at > now() as leased from webhook_deliveries where endpoint_id = ?", [listener.id],
    );
    expect(left).toEqual({ status: "pending", leased: true });
    const refused = await db.run(Effect.flip(LocalListeners.use((l) => l.open(scope, request, 60_000, 5))));
    expect(refused).toMatchObject({ _tag: "SecretKeyUnavailable", keyId: "elsewhere" });
    // Sealed again with the test key, as the other tests' starts expect.
    await sql("update webhook_endpoints set secret = ? where id = ?", [makeSecretCipher(TEST_SECRET_KEYS).seal(listener.secret, endpointSecretContext(org.id, listener.id)), listener.id]);
  });
});
