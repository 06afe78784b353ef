import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSecretKey, generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, freePort, TEST_SECRET_KEYS_TEXT, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliFailing, runCliJson } from "./cli-process.ts";

/** `platter secrets reencrypt` and the key a command needs, as real processes; what they wrote is checked in SQL. */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const keyIdsStored = async (): Promise<string[]> =>
  (await db.orm.em.getConnection().execute<{ key_id: string }[]>(
    "select distinct split_part(secret, ':', 2) as key_id from webhook_endpoints order by 1",
  )).map((row) => row.key_id);

describe("platter secrets reencrypt", () => {
  it("re-seals every stored secret with the first key and reports how many; the old key may go then", async () => {
    const org = await createOrganization(db, "Keyed Caterers");
    const { secret } = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://example.com/hook", [], generateSigningSecret())));
    const fresh = generateSecretKey("fresh").text;
    const result = await runCliJson(["secrets", "reencrypt"], { DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: `${fresh},${TEST_SECRET_KEYS_TEXT}` });
    expect(result).toEqual({ key_id: "fresh", endpoint_secrets: 1, session_form_secrets: 0 });
    expect(await keyIdsStored()).toEqual(["fresh"]);
    const endpoints = await runCliJson(["webhook", "list", "--org", String(org.id)], { DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: fresh });
    expect(endpoints.endpoints ?? endpoints).toHaveLength(1);
    const human = await runCli(["secrets", "reencrypt"], { DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: `${TEST_SECRET_KEYS_TEXT},${fresh}` });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('re-sealed 1 endpoint secret(s) and 0 session form secret(s) with key "test"');
    expect(await keyIdsStored()).toEqual(["test"]);
    expect(JSON.stringify(await db.orm.em.getConnection().execute("select * from webhook_endpoints"))).not.toContain(secret.slice(6));
  });

  it.each([
    ["unset", { SECRET_ENCRYPTION_KEYS: "" }, 1, /SECRET_ENCRYPTION_KEYS is not set/],
    ["not a key", { SECRET_ENCRYPTION_KEYS: "k:abc" }, 2, /SECRET_ENCRYPTION_KEYS key "k" must be 32 bytes/],
    ["another key", { SECRET_ENCRYPTION_KEYS: generateSecretKey("other").text }, 1, /sealed with key "test", which SECRET_ENCRYPTION_KEYS does not hold/],
  ])("fails at once, saying why, when the key is %s", async (_, env, code, message) => {
    const result = await runCliFailing(["secrets", "reencrypt"], { DATABASE_URL: db.url, ...env });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
  });
});

describe("the embedded database's key", () => {
  it("is made beside its data by the first command without SECRET_ENCRYPTION_KEYS and read by the next; another key is refused", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "platter-embedded-keys-"));
    await chmod(dataDir, 0o755); // reachable by the `postgres` user, so the data stays here
    const env = {
      DATABASE_URL: "", SECRET_ENCRYPTION_KEYS: "", PLATTER_DATA_DIR: dataDir, PLATTER_LOCAL_PG_PORT: String(await freePort()),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    };
    try {
      const org = await runCliJson(["org", "create", "--name", "Embedded Caterers", "--currency", "EUR"], env);
      const keyFile = join(dataDir, "secret-encryption-keys");
      expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
      const added = await runCliJson(["webhook", "add", "--org", String(org.id), "--url", "http://127.0.0.1:9/hook"], env);
      expect(added.secret).toMatch(/^whsec_/);
      const reencrypted = await runCliJson(["secrets", "reencrypt"], env);
      expect(reencrypted).toEqual({ key_id: "local", endpoint_secrets: 0, session_form_secrets: 0 });
      const refused = await runCliFailing(["secrets", "reencrypt"], { ...env, SECRET_ENCRYPTION_KEYS: generateSecretKey("other").text });
      expect(refused.stderr).toMatch(/sealed with key "local", which SECRET_ENCRYPTION_KEYS does not hold/);
      expect(await readFile(keyFile, "utf8")).toMatch(/^local:[A-Za-z0-9+/]{43}=\n$/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
