import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** `bin/platter.js`, the workspace bin: it must pass arguments, output and exit code through unchanged. */

const BIN = fileURLToPath(new URL("../bin/platter.js", import.meta.url));

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const runBin = (args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, DATABASE_URL: db.url } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });

describe("bin/platter.js", () => {
  it("runs a command and passes its output through", async () => {
    expect(await runBin(["migrate", "--json"])).toMatchObject({ code: 0, stdout: '{"migrated":true}\n' });
  });

  it("passes the exit code of a failing command through", async () => {
    const result = await runBin(["key", "revoke", "--id", "nope"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toContain("--id must be a positive integer");
  });
});
