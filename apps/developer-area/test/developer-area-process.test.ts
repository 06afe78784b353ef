import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { createTestDatabase, freePort, type TestDatabase } from "@platter/testing";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";

/** `npm run developer-area` as a real process: it serves on its port until SIGTERM, and a taken port is one line naming the variable. */

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));

let db: TestDatabase;
const processes: ChildProcessWithoutNullStreams[] = [];
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterEach(() => {
  for (const child of processes.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(() => db?.dispose());

const startArea = (env: Record<string, string>) => {
  const child = spawn(process.execPath, ["--conditions=@platter/source", MAIN], {
    env: { ...process.env, DATABASE_URL: db.url, HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
  });
  processes.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
};

describe("the Developer area process", () => {
  it("serves its pages on DEVELOPER_AREA_PORT and exits 0 on SIGTERM", async () => {
    const port = await freePort();
    const area = startArea({ DEVELOPER_AREA_PORT: String(port) });
    await new Promise<void>((done, fail) => {
      const look = () => area.stdout().includes("developer area listening") && done();
      area.child.stdout.on("data", look);
      void area.exited.then((code) => fail(new Error(`exited ${code}: ${area.stderr()}`)));
    });
    const page = await fetch(`http://127.0.0.1:${port}/api-keys`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("Sign in to the Developer area");
    area.child.kill("SIGTERM");
    expect(await area.exited).toBe(0);
  });

  it("exits 2 with one line naming DEVELOPER_AREA_PORT when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, "127.0.0.1", done));
    const port = (taken.address() as { port: number }).port;
    try {
      const area = startArea({ DEVELOPER_AREA_PORT: String(port), LOG_LEVEL: "silent" });
      expect(await area.exited).toBe(2);
      expect(area.stderr().trim()).toBe(
        `configuration error: DEVELOPER_AREA_PORT: port ${port} on 127.0.0.1 is already in use; set DEVELOPER_AREA_PORT to a free port`,
      );
    } finally {
      taken.close();
    }
  });

  it.each([
    ["DEVELOPER_AREA_PUBLIC_URL", "ftp://example.com", "DEVELOPER_AREA_PUBLIC_URL must be an http(s) address without a path"],
    ["DEVELOPER_AREA_FRAME_ANCESTORS", "'self'; script-src *", "DEVELOPER_AREA_FRAME_ANCESTORS must be 'self', 'none', or exact origins"],
    ["DEVELOPER_AREA_FRAME_ANCESTORS", "https://*.example.com", `DEVELOPER_AREA_FRAME_ANCESTORS must be 'self', 'none', or exact origins written scheme://host[:port], such as 'self' https://app.example.com: "https://*.example.com" is not an exact http(s) origin (no wildcard or bare scheme)`],
    ["DEVELOPER_AREA_FRAME_ANCESTORS", "*", "DEVELOPER_AREA_FRAME_ANCESTORS must be 'self', 'none', or exact origins"],
  ])("refuses a bad %s with exit 2, naming it", async (variable, value, message) => {
    const area = startArea({ [variable]: value, LOG_LEVEL: "silent" });
    expect(await area.exited).toBe(2);
    expect(area.stderr()).toContain(`configuration error: ${message}`);
  });
});
