import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * Who may import the harness and the database internals behind it, as lint (eslint.config.js)
 * decides: tests, test setup and tools import `@platter/testing`; no package's or app's production
 * source does; `@platter/persistence/tooling` is the harness's and the bulk seeds' alone; and of the
 * apps' code only `platter seed bulk` imports the bulk seeds.
 */

const root = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The messages of the module rules lint gives `code` as if it were the file at `path`. */
const refusals = async (path: string, code: string): Promise<string[]> => {
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` });
  return result!.messages
    .filter((message) => ["@nx/enforce-module-boundaries", "@typescript-eslint/no-restricted-imports"].includes(message.ruleId ?? ""))
    .map((message) => message.ruleId!);
};

const HARNESS = 'import { createTestDatabase } from "@platter/testing";\nexport const harness = createTestDatabase;\n';
const TOOLING = 'import { Database } from "@platter/persistence/tooling";\nexport const database = Database;\n';
const SEEDS = 'import { Seeding } from "@platter/seeds";\nexport const seeding = Seeding;\n';

describe("who may import the test harness", () => {
  it.each([
    "packages/persistence/test/probe.test.ts",
    "packages/application/test/probe.test.ts",
    "apps/api/test/probe.test.ts",
    "apps/developer-area/test/probe-harness.ts",
    "tools/bench/src/probe.ts",
  ])("lets %s import it", async (path) => {
    expect(await refusals(path, HARNESS)).toEqual([]);
  });

  it.each([
    "packages/persistence/src/probe.ts",
    "packages/application/src/probe.ts",
    "packages/ops/src/probe.ts",
    "apps/api/src/probe.ts",
    "apps/cli/src/probe.ts",
    "apps/developer-area/src/probe.ts",
  ])("refuses it in %s", async (path) => {
    expect(await refusals(path, HARNESS)).toEqual(["@nx/enforce-module-boundaries"]);
  });
});

describe("who may import the database's internals", () => {
  it.each(["packages/testing/src/probe.ts", "packages/seeds/src/probe.ts"])("lets %s import them", async (path) => {
    expect(await refusals(path, TOOLING)).toEqual([]);
  });

  it.each(["packages/application/src/probe.ts", "apps/cli/src/probe.ts", "apps/api/test/probe.test.ts", "tools/bench/src/probe.ts"])(
    "refuses them in %s",
    async (path) => {
      expect(await refusals(path, TOOLING)).toEqual(["@typescript-eslint/no-restricted-imports"]);
    },
  );
});

describe("who may import the bulk seeds", () => {
  it.each(["apps/cli/src/commands/seed.ts", "apps/developer-area/test/probe.test.ts", "tools/bench/src/probe.ts"])("lets %s import them", async (path) => {
    expect(await refusals(path, SEEDS)).toEqual([]);
  });

  it.each(["apps/cli/src/first-run.ts", "packages/application/src/probe.ts", "apps/developer-area/src/probe.ts"])("refuses them in %s", async (path) => {
    expect(await refusals(path, SEEDS)).toEqual(["@nx/enforce-module-boundaries"]);
  });
});
