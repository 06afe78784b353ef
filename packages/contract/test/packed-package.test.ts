import { type InstalledPackage, installPacked, olderNode, SHIPPED_FILES } from "@platter/packed-packages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "../src/index.ts";

/**
 * The package as another team installs it: packed by npm (its `prepack` builds it) with the domain
 * it depends on, installed from the tarballs into a fresh project outside the monorepo, and
 * imported by plain JavaScript on this Node and on the machine's older one (Node 20): the same
 * document as the sources build.
 */

const SCRIPT = `
  import { buildOpenApiDocument } from "@platter/contract";
  console.log(JSON.stringify({ node: process.version, document: buildOpenApiDocument() }));
`;

let installed: InstalledPackage;
let older: string | undefined;

beforeAll(async () => {
  installed = await installPacked(new URL("..", import.meta.url).pathname, [new URL("../../domain", import.meta.url).pathname]);
  older = await olderNode();
}, 300_000);
afterAll(() => installed?.remove());

describe("the packed package", () => {
  it("holds its build, types and README, and neither sources nor tests", () => {
    expect(installed.files).toEqual(expect.arrayContaining(SHIPPED_FILES));
    expect(installed.unshippable).toEqual([]);
  });

  it("builds the same document in a fresh project on this Node", async () => {
    const result = JSON.parse(await installed.run(process.execPath, SCRIPT));
    expect(result).toEqual({ node: process.version, document: buildOpenApiDocument() });
  });

  it("builds it on the machine's older Node (20) when there is one", async (context) => {
    if (older === undefined) return context.skip("no older Node on the PATH");
    const result = JSON.parse(await installed.run(older, SCRIPT));
    expect(result.node).not.toBe(process.version);
    expect(result.document).toEqual(buildOpenApiDocument());
  });
});
