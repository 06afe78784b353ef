import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { generateSecretKey, generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, freePort, startControlledPostgres } from "@platter/testing";
import { describe, expect, inject, it } from "vitest";

/**
 * Processes that start before their database (as containers often do): they wait for it with a
 * bounded, logged retry, and when it never comes they exit 1 with one line naming the address
 * and the variable to check, never a stack trace. The same for the API, the dispatcher and the CLI.
 */

const main = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const PROCESSES = [
  ["the API", [main("../src/main.ts")]],
  ["the dispatcher", [main("../../dispatcher/src/main.ts")]],
  ["the CLI", [main("../../cli/src/main.ts"), "webhook", "list", "--org", "1"]],
] as const;

const run = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--conditions=@platter/source", ...args], {
    env: { ...process.env, LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: "0", OPS_PORT: "0", DISPATCHER_OPS_PORT: "0", ...env },
  });
  let output = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => ((stderr += chunk), (output += chunk)));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, exited, output: () => output, stderr: () => stderr };
};

describe("a database that is not there at start", () => {
  it.each(PROCESSES)("%s waits for it, then exits 1 with one line naming the address and DATABASE_URL", async (_, args) => {
    const port = await freePort(); // nothing listens there
    const began = Date.now();
    const process = run(args, { DATABASE_URL: `postgres://platter:secret@127.0.0.1:${port}/platter`, DATABASE_START_TIMEOUT: "2s" });
    expect(await process.exited).toBe(1);
    expect(Date.now() - began).toBeGreaterThanOrEqual(2_000);
    const lastLine = process.stderr().trim().split("\n").at(-1)!;
    // The reason is ECONNREFUSED, unless another test's server took the free port meanwhile and hung up.
    expect(lastLine).toMatch(new RegExp(`cannot reach the database at 127\\.0\\.0\\.1:${port}: [^\\n]+, still after 2 s; check DATABASE_URL`));
    expect(process.output()).toMatch(/waiting for the database/);
    expect(process.output()).not.toMatch(/secret/); // the URL's password is never printed
    expect(process.stderr()).not.toMatch(/\n\s+at /); // no stack trace
  }, 30_000);

  it("is waited for: the API starts serving once the database comes up", async () => {
    const postgres = await startControlledPostgres();
    const db = await createTestDatabase(postgres.adminUrl);
    const opsPort = await freePort();
    await postgres.stop("fast");
    const api = run([main("../src/main.ts")], { DATABASE_URL: db.url, OPS_PORT: String(opsPort), DATABASE_START_TIMEOUT: "30s" });
    try {
      await expect.poll(() => api.output(), { timeout: 10_000 }).toMatch(/waiting for the database/);
      await postgres.start();
      await expect.poll(async () => (await fetch(`http://127.0.0.1:${opsPort}/readyz`).catch(() => undefined))?.status, { timeout: 20_000 }).toBe(200);
      api.child.kill("SIGTERM");
      expect(await api.exited).toBe(0);
    } finally {
      api.child.kill("SIGKILL");
      await db.dispose().catch(() => {});
      await postgres.dispose();
    }
  }, 60_000);
});

describe("the stored secrets' keys at start", () => {
  const ALL = [...PROCESSES, ["the Developer area", [main("../../developer-area/src/main.ts")]]] as const;
  const other = generateSecretKey("other").text;
  const sameIdOtherKey = generateSecretKey("test").text;

  it.each(ALL.flatMap(([name, args]) => [
    [name, "unset", args, "", /SECRET_ENCRYPTION_KEYS is not set: with DATABASE_URL, signing secrets are sealed with keys the operator gives/],
    [name, "not the key they were sealed with", args, other, /sealed with key "test", which SECRET_ENCRYPTION_KEYS does not hold/],
    [name, "another key under the id the database knows", args, sameIdOtherKey, /gives key "test", but this database knows another key under that id/],
  ] as const))("%s exits 1 with one line, no stack, when SECRET_ENCRYPTION_KEYS is %s", async (_, _case, args, keys, message) => {
    const db = await createTestDatabase(inject("pgAdminUrl"));
    try {
      const org = await createOrganization(db, "Sealed Caterers");
      await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://example.com/hook", [], generateSigningSecret())));
      const process = run(args, { DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: keys, DEVELOPER_AREA_PORT: "0" });
      expect(await process.exited).toBe(1);
      expect(process.stderr().trim().split("\n").at(-1)!).toMatch(message);
      expect(process.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      await db.dispose();
    }
  }, 60_000);
});
