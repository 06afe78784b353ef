import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anchorsOf, brokenLinks, codeBlockLines, collapseWhitespace, missingTerms, readDocs, REPOSITORY_ROOT } from "../src/docs.ts";

/**
 * The docs are shaped like their readers: a short README and one file per reader and subject under
 * docs/. Splitting the old one-file README moved text and dropped none of it, and these keep it so.
 * A fact changed on purpose (a default, a renamed setting) takes its old term out of
 * `readme-before-split.terms` in the same commit, so the change is seen in review.
 */

const docs = await readDocs();
const readme = docs.find((doc) => doc.path === "README.md")!.text;

/** The setting names each process's configuration reader names (`apps/x/src/config.ts`, `packages/ops/src/config.ts`). */
const settingsReadByCode = async (): Promise<ReadonlyArray<string>> => {
  const names = new Set<string>();
  for (const group of ["apps", "packages"]) {
    for (const project of await readdir(join(REPOSITORY_ROOT, group))) {
      const path = join(REPOSITORY_ROOT, group, project, "src", "config.ts");
      if (!existsSync(path)) continue;
      for (const match of (await readFile(path, "utf8")).matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"/g)) names.add(match[1]!);
    }
  }
  return [...names].sort();
};

/** The settings with a row of their own in a table (`| \`NAME\` |`, or `| \`A\` / \`B\` |` for a pair). */
const settingsInTables = (markdown: string): ReadonlySet<string> => {
  const names = new Set<string>();
  for (const row of markdown.match(/^\| `[A-Z][^|]*\|/gm) ?? []) for (const match of row.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1]!);
  return names;
};

describe("the docs", () => {
  it("hold every code span, setting name and command line of the README before it was split", async () => {
    const terms = (await readFile(new URL("./readme-before-split.terms", import.meta.url), "utf8")).split("\n").filter((term) => term !== "");
    expect(terms.length, "the terms of the old README are there to compare").toBeGreaterThan(700);
    expect(missingTerms(terms, docs)).toEqual([]);
  });

  it("list every setting the configuration readers name in a settings table (docs/configuration.md or the README)", async () => {
    const settings = await settingsReadByCode();
    expect(settings.length, "the configuration readers were found").toBeGreaterThan(50);
    const documented = new Set([...settingsInTables(readme), ...settingsInTables(docs.find((doc) => doc.path === "docs/configuration.md")!.text)]);
    expect(settings.filter((name) => !documented.has(name))).toEqual([]);
  });

  it("keep in the README the quick start and the test command .ci/run runs", async () => {
    const ci = await readFile(join(REPOSITORY_ROOT, ".ci/run"), "utf8");
    const testCommand = /^npm test\b/m.exec(ci)?.[0];
    expect(testCommand, ".ci/run runs npm test").toBe("npm test");
    const commands = codeBlockLines(readme).map((line) => line.replace(/\s+#.*$/, ""));
    expect(commands).toContain(testCommand);
    expect(commands).toContain("npm install && npm start");
  });

  it("are each linked from the README", () => {
    const linked = [...readme.matchAll(/\]\((docs\/[^)#\s]+\.md)(?:#[^)]*)?\)/g)].map((match) => match[1]);
    expect(docs.map((doc) => doc.path).filter((path) => path !== "README.md" && !linked.includes(path))).toEqual([]);
  });

  it("link only to files and headings that exist", () => {
    expect(brokenLinks(docs, (path) => existsSync(join(REPOSITORY_ROOT, path)))).toEqual([]);
  });

  it("keep the README short enough to read in five minutes", () => {
    expect(collapseWhitespace(readme).split(" ").length).toBeLessThan(1200);
  });
});

describe("anchorsOf", () => {
  it.each([
    ["## Safe retries: `Idempotency-Key`", "safe-retries-idempotency-key"],
    ["## Local forwarding: `platter listen`", "local-forwarding-platter-listen"],
    ["# The API (v1)", "the-api-v1"],
    ["## Compatibility policy for `/v1`", "compatibility-policy-for-v1"],
  ])("makes GitHub's anchor of %s", (heading, anchor) => {
    expect([...anchorsOf(heading)]).toEqual([anchor]);
  });
});

describe("brokenLinks", () => {
  it.each([
    ["[x](docs/api.md#no-such-heading)", "docs/api.md#no-such-heading"],
    ["[x](docs/nowhere.md)", "docs/nowhere.md"],
    ["[x](#nothing-here)", "#nothing-here"],
  ])("finds %s broken", (link, target) => {
    const files = [{ path: "README.md", text: `# Title\n\n${link}\n` }, { path: "docs/api.md", text: "# The API\n\n## Errors\n" }];
    expect(brokenLinks(files, () => false)).toEqual([{ from: "README.md", target }]);
  });

  it("follows a link relative to the linking file, with its anchor", () => {
    const files = [{ path: "docs/cli.md", text: "# CLI\n\nSee [errors](api.md#errors).\n" }, { path: "docs/api.md", text: "# The API\n\n## Errors\n" }];
    expect(brokenLinks(files, () => false)).toEqual([]);
  });
});
