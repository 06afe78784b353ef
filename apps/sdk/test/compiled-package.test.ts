import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { signPayload } from "@platter/domain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * The package as published: `tsc -p tsconfig.lib.json` output (ES2022, no TypeScript at run
 * time), imported by plain JavaScript, on this Node and on an older Node found on the PATH (the
 * machine's own Node, e.g. 20), once with the global `crypto` removed as on Node 18.
 */

const run = promisify(execFile);
const SDK_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** A `node` on the PATH older than this one (outside node_modules), if there is one. */
const olderNode = async (): Promise<string | undefined> => {
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

const SCRIPT = `
  if (process.env.DROP_GLOBAL_CRYPTO) delete globalThis.crypto;
  const { Platter, verifyWebhook, NotFoundError } = await import("./dist/index.js");
  const platter = new Platter({ apiKey: process.env.KEY, baseUrl: process.env.BASE_URL });
  const { id } = await platter.clients.create({ name: "Compiled " + process.version });
  const names = [];
  for await (const client of platter.clients.list({ limit: 1 })) names.push(client.name);
  const missing = await platter.events.retrieve(999999).catch((error) => error instanceof NotFoundError);
  const envelope = await verifyWebhook(process.env.BODY, process.env.SIGNATURE, "whsec_compiled");
  console.log(JSON.stringify({ node: process.version, globalCrypto: globalThis.crypto !== undefined, id, names, missing, envelope }));
`;

let bed: SdkTestbed;
let packageDir: string;
let older: string | undefined;

beforeAll(async () => {
  bed = await startSdkTestbed();
  packageDir = await mkdtemp(join(tmpdir(), "platter-sdk-"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  await run(process.execPath, [tsc, "-p", "tsconfig.lib.json", "--outDir", join(packageDir, "dist")], { cwd: SDK_ROOT });
  await writeFile(join(packageDir, "package.json"), JSON.stringify({ type: "module" }));
  await writeFile(join(packageDir, "check.mjs"), SCRIPT);
  older = await olderNode();
});
afterAll(async () => {
  await bed?.close();
  if (packageDir) await rm(packageDir, { recursive: true, force: true });
});

const body = JSON.stringify({ id: "evt_1", type: "event.created", created_at: "2027-01-01T00:00:00.000Z", data: { id: 1, name: "Gala" } });

const check = async (node: string, dropGlobalCrypto: boolean) => {
  const env = {
    ...process.env,
    KEY: bed.org.writeKey,
    BASE_URL: bed.baseUrl,
    BODY: body,
    SIGNATURE: signPayload("whsec_compiled", body),
    ...(dropGlobalCrypto ? { DROP_GLOBAL_CRYPTO: "1" } : {}),
  };
  const { stdout } = await run(node, ["check.mjs"], { cwd: packageDir, env });
  return JSON.parse(stdout);
};

describe("the compiled package", () => {
  it("runs on this Node", async () => {
    const result = await check(process.execPath, false);
    expect(result).toMatchObject({ globalCrypto: true, id: expect.any(Number), missing: true, envelope: JSON.parse(body) });
    expect(result.names.length).toBeGreaterThanOrEqual(1);
  });

  it("runs on this Node without a global crypto (as Node 18)", async () => {
    expect(await check(process.execPath, true)).toMatchObject({ globalCrypto: false, missing: true, envelope: JSON.parse(body) });
  });

  it("runs on an older Node from the PATH, when there is one", async (context) => {
    if (older === undefined) return context.skip("no older Node on the PATH");
    const result = await check(older, false);
    expect(result.node).not.toBe(process.version);
    expect(result).toMatchObject({ missing: true, envelope: JSON.parse(body) });
    expect(await check(older, true)).toMatchObject({ globalCrypto: false, missing: true, envelope: JSON.parse(body) });
  });
});
