import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
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

/**
 * `npm pack` of `workspace` into `destination`, one at a time per workspace across test processes:
 * its `prepack` rebuilds `dist/` in place, and two test files packing the domain at once would
 * otherwise pack each other's half-written build. The lock is a directory (made atomically).
 */
const pack = async (workspace: string, destination: string): Promise<Packed[]> => {
  const lock = join(tmpdir(), `platter-pack-${resolve(workspace).replaceAll(/[^A-Za-z0-9]+/g, "-")}.lock`);
  for (let waited = 0; ; waited += 200) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || waited > 180_000) throw error;
      await sleep(200);
    }
  }
  try {
    const { stdout } = await npm(["pack", "--json", "--pack-destination", destination], workspace);
    return JSON.parse(stdout.slice(stdout.indexOf("["))) as Packed[];
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
};

/** A fresh project with one packed package installed: where its scripts run. */
export interface InstalledPackage {
  /** The project's directory (`node_modules/<name>` holds the unpacked tarball). */
  readonly dir: string;
  /** The files the tarball holds, relative to the package (`dist/index.js`, `README.md`, …). */
  readonly files: ReadonlyArray<string>;
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
    for (const workspace of [workspaceDir, ...alongside]) tarballs.push(...(await pack(workspace, dir)));
    const packed = tarballs[0];
    await writeFile(join(dir, "package.json"), JSON.stringify({ name: "fresh-project", private: true, type: "module" }));
    await npm(["install", "--prefer-offline", "--no-package-lock", ...tarballs.map((tarball) => join(dir, tarball.filename))], dir);
    let count = 0;
    return {
      dir,
      files: packed!.files.map((file) => file.path),
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
