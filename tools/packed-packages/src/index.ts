import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

/**
 * A package as another team gets it: `npm pack` of its workspace (its `prepack` builds it), the
 * tarball installed with npm into a fresh project outside the monorepo, and scripts run there on
 * any Node.
 */

const run = promisify(execFile);

/** npm from the PATH, quiet. */
const npm = (args: ReadonlyArray<string>, cwd: string) =>
  run("npm", args, {
    cwd,
    env: { ...process.env, npm_config_fund: "false", npm_config_audit: "false", npm_config_update_notifier: "false" },
  });

/** What `npm pack --json` says of one tarball. */
interface Packed {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

/** The packing lock: one `npm pack` at a time across test processes (see `pack`). */
const LOCK = join(tmpdir(), "platter-npm-pack.lock");

/** Takes the packing lock (a directory, made atomically, naming its owner), breaking it when its owner is gone. */
const takeLock = async (): Promise<void> => {
  for (let waited = 0; ; waited += 200) {
    try {
      await mkdir(LOCK);
      await writeFile(join(LOCK, "owner"), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || waited > 300_000) throw error;
    }
    const owner = Number(await readFile(join(LOCK, "owner"), "utf8").catch(() => "0"));
    if (owner > 0 && !alive(owner)) await rm(LOCK, { recursive: true, force: true });
    else await sleep(200);
  }
};

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * `npm pack` of `workspace` into `destination`, one at a time across test processes: `prepack`
 * rebuilds a workspace's `dist/` in place, and another package's build reads it (the contract's,
 * the domain's types), so two test files packing at once would pack or read a half-written build.
 */
const pack = async (workspace: string, destination: string): Promise<Packed[]> => {
  await takeLock();
  try {
    const { stdout } = await npm(["pack", "--json", "--pack-destination", destination], workspace);
    return JSON.parse(stdout.slice(stdout.indexOf("["))) as Packed[];
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
};

/** What every package of ours ships, at least: its build, its types and its README. */
export const SHIPPED_FILES = ["dist/index.js", "dist/index.d.ts", "README.md", "package.json"];

/** A TypeScript source or a test, which a tarball of ours must not hold. */
const unshippable = (file: string): boolean => (file.endsWith(".ts") && !file.endsWith(".d.ts")) || file.includes(".test.");

/** A fresh project with one packed package installed: where its scripts run. */
export interface InstalledPackage {
  /** The project's directory (`node_modules/<name>` holds the unpacked tarball). */
  readonly dir: string;
  /** The files the tarball holds, relative to the package (`dist/index.js`, `README.md`, …). */
  readonly files: ReadonlyArray<string>;
  /** Those of `files` no package of ours ships: TypeScript sources and tests. */
  readonly unshippable: ReadonlyArray<string>;
  /** Runs `script` (an ES module) in the project with `node`; its standard output. */
  readonly run: (node: string, script: string, env?: Readonly<Record<string, string>>) => Promise<string>;
  readonly remove: () => Promise<void>;
}


/**
 * Packs the workspace at `workspaceDir` and installs the tarball into a fresh project (other
 * dependencies from npm's cache first). `alongside`: workspaces of ours it depends on, packed and
 * installed with it, as another team would get them.
 */
export const installPacked = async (workspaceDir: string, alongside: ReadonlyArray<string> = []): Promise<InstalledPackage> => {
  const dir = await mkdtemp(join(tmpdir(), "platter-packed-"));
  try {
    const tarballs: Packed[] = [];
    // Its dependencies first: its own build reads theirs.
    for (const workspace of alongside) tarballs.push(...(await pack(workspace, dir)));
    const packed = (await pack(workspaceDir, dir))[0];
    tarballs.push(packed!);
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "fresh-project", private: true, type: "module" }));
    await npm(["install", "--prefer-offline", "--no-package-lock", ...tarballs.map((tarball) => join(dir, tarball.filename))], dir);
    const files = packed!.files.map((file) => file.path);
    let count = 0;
    return {
      dir,
      files,
      unshippable: files.filter(unshippable),
      run: async (node, script, env = {}) => {
        const file = join(dir, `check-${++count}.mjs`);
        await writeFile(file, script);
        return (await run(node, [file], { cwd: dir, env: { ...process.env, ...env } })).stdout;
      },
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
};

/** A `node` on the PATH older than this one (outside node_modules, 18 or later), if there is one: the machine's own Node, e.g. 20. */
export const olderNode = async (): Promise<string | undefined> => {
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir === "" || dir.includes("node_modules")) continue;
    const candidate = join(dir, "node");
    try {
      const { stdout } = await run(candidate, ["--version"]);
      const major = Number(/^v(\d+)/.exec(stdout.trim())?.[1]);
      if (major >= 18 && major < Number(process.versions.node.split(".")[0])) return candidate;
    } catch {
      // not there
    }
  }
  return undefined;
};
