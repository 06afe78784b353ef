import { type InstalledPackage, installPacked, olderNode, SHIPPED_FILES } from "@platter/packed-packages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The package as another team installs it: packed by npm (its `prepack` builds it), installed from
 * the tarball into a fresh project outside the monorepo, imported by plain JavaScript on this Node
 * and on the machine's older one (Node 20).
 */

const SCRIPT = `
  import { Client, endpointOrigin, formatMinorUnits, signPayload, verifySignature, WEBHOOK_EVENT_TYPES } from "@platter/domain";
  import { Schema } from "effect";
  const client = Schema.decodeUnknownSync(Client)({
    id: 1, name: "Ada", email: null, phone: null, company: null, created_at: "2026-11-24T08:00:00.000Z",
  });
  const signature = signPayload("whsec_packed", "{}");
  console.log(JSON.stringify({
    node: process.version, client: client.name, origin: endpointOrigin("https://HOOKS.example.com:443/a"),
    money: formatMinorUnits(123456, "EUR"), verified: verifySignature("whsec_packed", "{}", signature), types: WEBHOOK_EVENT_TYPES.length,
  }));
`;

const EXPECTED = { client: "Ada", origin: "https://hooks.example.com", money: "1234.56", verified: true, types: 6 };

let installed: InstalledPackage;
let older: string | undefined;

beforeAll(async () => {
  installed = await installPacked(new URL("..", import.meta.url).pathname);
  older = await olderNode();
}, 300_000);
afterAll(() => installed?.remove());

describe("the packed package", () => {
  it("holds its build, types and README, and neither sources nor tests", () => {
    expect(installed.files).toEqual(expect.arrayContaining(SHIPPED_FILES));
    expect(installed.unshippable).toEqual([]);
  });

  it("is imported by plain JavaScript in a fresh project on this Node", async () => {
    const result = JSON.parse(await installed.run(process.execPath, SCRIPT));
    expect(result).toMatchObject({ ...EXPECTED, node: process.version });
  });

  it("runs on the machine's older Node (20) when there is one", async (context) => {
    if (older === undefined) return context.skip("no older Node on the PATH");
    const result = JSON.parse(await installed.run(older, SCRIPT));
    expect(result.node).not.toBe(process.version);
    expect(result).toMatchObject(EXPECTED);
  });
});
