import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LOG_BUFFER_BYTES } from "@platter/ops";
import { describe, expect, it } from "vitest";

/**
 * The processes' log (`createLogger`) when its destination stalls (a pipe nobody reads): what
 * waits is bounded by `LOG_BUFFER_BYTES`, the lines beyond it are dropped, and a warning says how
 * many once the destination takes lines again. A real process whose stdout this test leaves
 * unread until the process has logged far more than the bound.
 */

const LINES = 150_000;
const FLOOD = `
import { createLogger } from "@platter/ops";
const logger = createLogger("flood", "info");
const text = "x".repeat(200);
for (let i = 0; i < ${LINES}; i++) logger.info({ i }, text);
process.stderr.write("logged\\n");
setTimeout(() => {}, 3_000);
`;

describe("a stalled log destination", () => {
  it("keeps at most the bound waiting, drops the rest and says how many were dropped", async () => {
    const child = spawn(process.execPath, ["--conditions=@platter/source", "--input-type=module", "-e", FLOOD], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
    });
    // Nothing is read from stdout until every line was logged.
    await new Promise<void>((logged, failed) => {
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => chunk.includes("logged") && logged());
      child.once("exit", (code) => failed(new Error(`the process exited (${code}) before logging everything`)));
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code).toBe(0);

    const lines = stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { msg: string; dropped?: number });
    const logged = lines.filter((line) => line.msg.startsWith("xxx"));
    const warnings = lines.filter((line) => line.msg.startsWith("log lines dropped"));
    const bytesLogged = logged.length * (JSON.stringify(lines[0]).length + 1);
    // What got through fits in the bound plus what the pipe itself held when it stalled.
    expect(bytesLogged).toBeLessThanOrEqual(LOG_BUFFER_BYTES + 1024 * 1024);
    expect(logged.length).toBeLessThan(LINES);
    expect(warnings.length).toBeGreaterThan(0);
    // Every line logged is either written or counted as dropped, once.
    expect(logged.length + warnings.reduce((sum, line) => sum + line.dropped!, 0)).toBe(LINES);
  }, 60_000);
});
