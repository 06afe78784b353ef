import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The CLI as a real process: Node 24 (vitest's own) running the TypeScript source. */

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Spawns `platter <args>`; the environment is the test's, plus `env`. */
export const spawnCli = (args: readonly string[], env: Record<string, string>): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, ["--conditions=@platter/source", MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
  });

/** A `platter` process left running: what it printed so far, and its exit code once it exits. */
export interface WatchedCli {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<number | null>;
}

/** Spawns `platter <args>` (as `spawnCli`) and keeps what it prints. */
export const watchCli = (args: readonly string[], env: Record<string, string>): WatchedCli => {
  const child = spawnCli(args, env);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
};

/** Runs `platter <args>` to completion. */
export const runCli = (args: readonly string[], env: Record<string, string>): Promise<CliResult> =>
  new Promise((done, fail) => {
    const child = spawnCli(args, env);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", fail);
    child.once("close", (code) => done({ code, stdout, stderr }));
  });

/** Runs a `--json` command and returns its one JSON object, failing unless stdout is exactly that. */
export const runCliJson = async (args: readonly string[], env: Record<string, string>): Promise<any> => {
  const result = await runCli([...args, "--json"], env);
  if (result.code !== 0) throw new Error(`platter ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  const lines = result.stdout.split("\n").filter((line) => line !== "");
  if (lines.length !== 1) throw new Error(`expected one line on stdout, got:\n${result.stdout}`);
  return JSON.parse(lines[0]!);
};

/**
 * Runs a `--json` command that must fail: fails unless it exited non-zero with nothing on stdout,
 * and returns its exit code and stderr for the test to check.
 */
export const runCliFailing = async (args: readonly string[], env: Record<string, string>): Promise<CliResult> => {
  const result = await runCli([...args, "--json"], env);
  if (result.code === 0) throw new Error(`platter ${args.join(" ")} succeeded, expected it to fail:\n${result.stdout}`);
  if (result.stdout !== "") throw new Error(`platter ${args.join(" ")} failed but printed on stdout:\n${result.stdout}`);
  return result;
};


