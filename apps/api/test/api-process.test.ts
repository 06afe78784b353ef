import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createOrganization, createTestDatabase, freePort, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** The API as operators run it: `apps/api/src/main.ts` in a process of its own. */

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
let db: TestDatabase;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await db?.dispose();
});

const spawnApi = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--conditions=@platter/source", MAIN], {
    env: { ...process.env, LOG_LEVEL: "warn", HOST: "127.0.0.1", ...env },
  });
  children.push(child);
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, exited, stderr: () => stderr };
};

const waitUntilHealthy = async (opsPort: number) => {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`http://127.0.0.1:${opsPort}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the API did not become healthy");
};

describe("the API process", () => {
  it("serves the API and the ops port, and exits 0 on SIGTERM", async () => {
    const org = await createOrganization(db);
    const [port, opsPort] = [await freePort(), await freePort()];
    const api = spawnApi({ DATABASE_URL: db.url, PORT: String(port), OPS_PORT: String(opsPort) });
    await waitUntilHealthy(opsPort);
    expect((await fetch(`http://127.0.0.1:${opsPort}/readyz`)).status).toBe(200);
    // The ops port serves probes only; the public port serves the API only.
    expect((await fetch(`http://127.0.0.1:${opsPort}/v1/me`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { authorization: `Bearer ${org.readKey}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: org.id, currency: "EUR" });
    api.child.kill("SIGTERM");
    expect(await api.exited).toBe(0);
  });

  /** What a GET of `url` got: its status, or the connection's refusal. */
  const reach = (url: string) =>
    fetch(url).then((r) => r.status, (error: unknown) => ((error as { cause?: { code?: string } }).cause?.code ?? "failed"));

  // 127.0.0.2 is this machine too, but not 127.0.0.1: a port bound to every interface answers
  // there, one bound to 127.0.0.1 only refuses it.
  it.each([
    [{}, "ECONNREFUSED"],
    [{ OPS_HOST: "0.0.0.0" }, 200],
  ])("serves the ops port (/metrics names organizations) on 127.0.0.1 only unless OPS_HOST says otherwise: %o", async (env, elsewhere) => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const api = spawnApi({ DATABASE_URL: db.url, PORT: String(port), OPS_PORT: String(opsPort), HOST: "0.0.0.0", ...env });
    await waitUntilHealthy(opsPort);
    expect(await reach(`http://127.0.0.1:${opsPort}/healthz`)).toBe(200);
    expect(await reach(`http://127.0.0.2:${opsPort}/healthz`)).toBe(elsewhere);
    // The public port listens where HOST says: every interface.
    expect(await reach(`http://127.0.0.2:${port}/v1/me`)).toBe(401);
    api.child.kill("SIGTERM");
    expect(await api.exited).toBe(0);
  });

  it.each([
    [{ PORT: "abc" }, "PORT must be an integer"],
    [{ DATABASE_URL: "mysql://nope" }, "DATABASE_URL must be a postgres:// URL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL must be one of"],
  ])("refuses to start with %o: exit 2 naming the variable", async (env, message) => {
    const api = spawnApi({ DATABASE_URL: db.url, ...env });
    expect(await api.exited).toBe(2);
    expect(api.stderr()).toContain(message);
  });

  it.each(["PORT", "OPS_PORT"])("exits 2 with one line naming %s when its port is already taken", async (variable) => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const takenPort = (taken.address() as { port: number }).port;
    try {
      const ports = { PORT: String(await freePort()), OPS_PORT: String(await freePort()), [variable]: String(takenPort) };
      const api = spawnApi({ DATABASE_URL: db.url, ...ports });
      expect(await api.exited).toBe(2);
      expect(api.stderr().trim()).toBe(
        `configuration error: ${variable}: port ${takenPort} on 127.0.0.1 is already in use; set ${variable} to a free port`,
      );
    } finally {
      taken.close();
    }
  });
});
