import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiApp, createApiObservability } from "@platter/api";
import { KeyRateLimits, UNTHROTTLED } from "@platter/ops";
import { createTestDatabase, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { runCli, runCliJson } from "./cli-process.ts";

/** `platter migrate`, `org create`, `key create|revoke` as real processes on a fresh database, keys checked over HTTP. */

let db: TestDatabase;
let env: Record<string, string>;
let api: Server;
let baseUrl: string;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  env = { DATABASE_URL: db.url };
  api = createServer(createApiApp(db.runtime, pino({ level: "silent" }), new KeyRateLimits(UNTHROTTLED),
    createApiObservability(db.runtime, pino({ level: "silent" }), false)).callback());
  await new Promise<void>((done) => api.listen(0, "127.0.0.1", done));
  baseUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  api?.closeAllConnections();
  await new Promise((done) => api?.close(done));
  await db?.dispose();
});

const count = async (table: string): Promise<number> => {
  const [row] = await db.orm.em.getConnection().execute<{ n: number }[]>(`select count(*)::int as n from ${table}`);
  return row!.n;
};

const me = (key: string) => fetch(`${baseUrl}/v1/me`, { headers: { authorization: `Bearer ${key}` } });

describe("platter migrate", () => {
  it("reports the schema up to date", async () => {
    expect(await runCliJson(["migrate"], env)).toEqual({ migrated: true });
  });
});

describe("platter org create, key create, key revoke", () => {
  it("creates an organization and keys that authenticate against the API until revoked", async () => {
    const org = await runCliJson(["org", "create", "--name", "Harbour Kitchen", "--currency", "GBP"], env);
    expect(org).toEqual({ id: expect.any(Number) });

    const read = await runCliJson(["key", "create", "--org", String(org.id), "--access", "read"], env);
    const write = await runCliJson(["key", "create", "--org", String(org.id), "--access", "read_write"], env);
    expect(read).toEqual({ id: expect.any(Number), key: expect.stringMatching(/^platter_ro_[0-9a-f]{64}$/) });
    expect(write).toEqual({ id: expect.any(Number), key: expect.stringMatching(/^platter_rw_[0-9a-f]{64}$/) });

    const response = await me(read.key);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: org.id, name: "Harbour Kitchen", currency: "GBP" });
    const created = await fetch(`${baseUrl}/v1/clients`, {
      method: "POST",
      headers: { authorization: `Bearer ${write.key}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Mrs Dalloway" }),
    });
    expect(created.status).toBe(201);

    expect(await runCliJson(["key", "revoke", "--id", String(read.id)], env)).toEqual({ id: read.id, revoked: true });
    expect((await me(read.key)).status).toBe(401);
    expect((await me(write.key)).status).toBe(200);
    // Revoking again is harmless.
    expect(await runCliJson(["key", "revoke", "--id", String(read.id)], env)).toEqual({ id: read.id, revoked: true });
  });

  it("creates a key that expires, and rolls a key: both secrets work for the overlap, audited as the operator's", async () => {
    const org = await runCliJson(["org", "create", "--name", "Rolling Kitchen", "--currency", "EUR"], env);
    const expiring = await runCliJson(["key", "create", "--org", String(org.id), "--access", "read", "--expires-in", "90d"], env);
    const [row] = await db.orm.em.getConnection().execute<{ days: number }[]>(
      "select round(extract(epoch from expires_at - now()) / 86400)::int as days from api_keys where id = ?", [expiring.id],
    );
    expect(row!.days).toBe(90);
    expect((await me(expiring.key)).status).toBe(200);

    const rolled = await runCliJson(["key", "roll", "--id", String(expiring.id), "--overlap", "2h"], env);
    expect(rolled).toEqual({
      id: expect.any(Number), key: expect.stringMatching(/^platter_ro_[0-9a-f]{64}$/), replaced: expiring.id,
      old_key_expires_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect((await me(expiring.key)).status).toBe(200);
    expect((await me(rolled.key)).status).toBe(200);
    const audit = await db.orm.em.getConnection().execute<{ action: string; operator: string }[]>(
      "select action, operator from audit_log where subject = ? order by id", [`api_key ${expiring.id}`],
    );
    expect(audit.map((entry) => entry.action)).toEqual(["api_key.created", "api_key.rolled"]);
    expect(audit[1]!.operator).toMatch(/ via the CLI$/);

    // Rolling it again is refused (roll its replacement), with exit 1 and nothing written.
    const before = await count("api_keys");
    const again = await runCli(["key", "roll", "--id", String(expiring.id), "--json"], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("This key was already rolled: roll its replacement instead");
    expect(await count("api_keys")).toBe(before);

    // With --overlap 0 the old key stops at once.
    const now = await runCliJson(["key", "roll", "--id", String(rolled.id), "--overlap", "0"], env);
    expect((await me(rolled.key)).status).toBe(401);
    expect((await me(now.key)).status).toBe(200);
  });

  it.each([
    { args: ["--expires-in", "soon"], message: '--expires-in must be a duration such as 30d, 24h or 90m, got "soon"' },
    { args: ["--expires-in", "5m"], message: "A key may expire in 1 hour at the soonest and in 3 years at the latest" },
    { args: ["--expires-in", "4000d"], message: "A key may expire in 1 hour at the soonest and in 3 years at the latest" },
  ])("refuses key create $args with exit 2 and creates no key", async ({ args, message }) => {
    const org = await runCliJson(["org", "create", "--name", "Expiry Test", "--currency", "EUR"], env);
    const before = await count("api_keys");
    const result = await runCli(["key", "create", "--org", String(org.id), "--access", "read", ...args, "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(await count("api_keys")).toBe(before);
  });

  it("refuses a key beyond API_KEYS_PER_ORGANIZATION with exit 2 and the reason, and creates no key", async () => {
    const org = await runCliJson(["org", "create", "--name", "Key Cap Test", "--currency", "EUR"], env);
    const capped = { ...env, API_KEYS_PER_ORGANIZATION: "2" };
    const [existing] = await db.orm.em.getConnection().execute<{ n: number }[]>("select count(*)::int as n from api_keys where organization_id = ?", [org.id]);
    for (let i = existing!.n; i < 2; i++) await runCliJson(["key", "create", "--org", String(org.id), "--access", "read"], capped);
    const before = await count("api_keys");
    const result = await runCli(["key", "create", "--org", String(org.id), "--access", "read_write", "--json"], capped);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "This organization already has 2 working API keys, the most it may have (revoked, expired and rolled ones do not count). Revoke one it no longer uses",
    );
    expect(await count("api_keys")).toBe(before);
  });

  it("refuses an overlap over 30 days with exit 2 and changes nothing", async () => {
    const org = await runCliJson(["org", "create", "--name", "Overlap Test", "--currency", "EUR"], env);
    const key = await runCliJson(["key", "create", "--org", String(org.id), "--access", "read"], env);
    const result = await runCli(["key", "roll", "--id", String(key.id), "--overlap", "31d", "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("The old key may keep working for 30 days at most");
    expect(await db.orm.em.getConnection().execute("select replaced_by from api_keys where id = ?", [key.id])).toEqual([{ replaced_by: null }]);
  });

  it("prints a human-readable report without --json", async () => {
    const result = await runCli(["org", "create", "--name", "Plain Output Ltd", "--currency", "EUR"], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^created organization \d+ "Plain Output Ltd" \(EUR\)\n$/);
  });

  it("refuses an unknown currency with exit 2 and creates nothing", async () => {
    const before = await count("organizations");
    const result = await runCli(["org", "create", "--name", "Nowhere", "--currency", "XYZ", "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('currency must be an ISO 4217 code such as EUR, got "XYZ"');
    expect(await count("organizations")).toBe(before);
  });

  it("refuses an unknown access level with exit 2 and creates no key", async () => {
    const org = await runCliJson(["org", "create", "--name", "Access Test", "--currency", "EUR"], env);
    const before = await count("api_keys");
    const result = await runCli(["key", "create", "--org", String(org.id), "--access", "admin", "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("--access must be one of read, read_write");
    expect(await count("api_keys")).toBe(before);
  });

  it("fails with exit 1 for a key of an unknown organization and creates no key", async () => {
    const before = await count("api_keys");
    const result = await runCli(["key", "create", "--org", "999999", "--access", "read", "--json"], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("organization 999999 does not exist");
    expect(await count("api_keys")).toBe(before);
  });

  it("fails with exit 1 when revoking an unknown key", async () => {
    const result = await runCli(["key", "revoke", "--id", "999999", "--json"], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("key 999999 does not exist");
  });

  it.each([
    { args: ["org", "create", "--currency", "EUR"], message: "Missing required argument: --name" },
    { args: ["key", "create", "--org", "abc", "--access", "read"], message: '--org must be a positive integer, got "abc"' },
    { args: ["key", "revoke", "--id", "0"], message: '--id must be a positive integer, got "0"' },
    { args: ["frobnicate"], message: "Unknown command frobnicate" },
    { args: [], message: "No command specified" },
  ])("answers `$message` with exit 2 (usage error)", async ({ args, message }) => {
    const result = await runCli([...args, "--json"], env);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(message);
  });
});
