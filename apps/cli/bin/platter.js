#!/usr/bin/env node
// `platter` as a workspace bin: runs the TypeScript source on this same Node with the condition
// that resolves workspace packages to their source, passing arguments, terminal and exit code through.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { fileURLToPath } from "node:url";

const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const child = spawn(process.execPath, ["--conditions=@platter/source", main, ...process.argv.slice(2)], { stdio: "inherit" });

// A terminal's Ctrl+C reaches the child through the process group; a signal sent to this process alone is passed on.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
child.on("error", (error) => {
  console.error(`platter: cannot start ${process.execPath}: ${error.message}`);
  process.exit(1);
});
