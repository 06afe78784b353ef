import { signPayload } from "@platter/domain";
import { type InstalledPackage, installPacked, olderNode, SHIPPED_FILES } from "@platter/packed-packages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SdkTestbed, seedRecordsWithChildren, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * The package as published: packed by npm (its `prepack` builds it: ES2022, no TypeScript at run
 * time), installed from the tarball into a fresh project, imported by plain JavaScript, on this
 * Node and on an older Node found on the PATH (the machine's own Node, e.g. 20), once with the
 * global `crypto` removed as on Node 18.
 */

const SCRIPT = `
  if (process.env.DROP_GLOBAL_CRYPTO) delete globalThis.crypto;
  const { Platter, verifyWebhook, NotFoundError, MissingRecipeError } = await import("@platter/sdk");
  const platter = new Platter({ apiKey: process.env.KEY, baseUrl: process.env.BASE_URL });
  const { id } = await platter.clients.create({ name: "Compiled " + process.version });
  const names = [];
  for await (const client of platter.clients.list({ limit: 1 })) names.push(client.name);
  const missing = await platter.events.retrieve(999999).catch((error) => error instanceof NotFoundError);
  const { dishes, allergens, diet_flags } = await platter.events.manifest(Number(process.env.EVENT_ID), { concurrency: 2 });
  const manifest = { dishes: dishes.map((dish) => dish.recipe_name), allergens, diet_flags, missingRecipeError: typeof MissingRecipeError };
  const envelope = await verifyWebhook(process.env.BODY, process.env.SIGNATURE, "whsec_compiled");
  console.log(JSON.stringify({ node: process.version, globalCrypto: globalThis.crypto !== undefined, id, names, missing, manifest, envelope }));
`;

let bed: SdkTestbed;
let eventId: number;
let installed: InstalledPackage;
let older: string | undefined;

beforeAll(async () => {
  bed = await startSdkTestbed();
  ({ eventId } = await seedRecordsWithChildren(bed.sql, bed.org.id));
  installed = await installPacked(new URL("..", import.meta.url).pathname);
  older = await olderNode();
}, 300_000);
afterAll(async () => {
  await bed?.close();
  await installed?.remove();
});

/** The seeded event's manifest as the script prints it: one dish, the Lemon tart. */
const manifest = {
  dishes: ["Lemon tart"],
  allergens: ["eggs", "gluten", "milk"],
  diet_flags: { vegetarian: true, vegan: false, gluten_free: false, dairy_free: false },
  missingRecipeError: "function",
};

const body = JSON.stringify({ id: "evt_1", type: "event.created", created_at: "2027-01-01T00:00:00.000Z", data: { id: 1, name: "Gala" } });

const check = async (node: string, dropGlobalCrypto: boolean) =>
  JSON.parse(await installed.run(node, SCRIPT, {
    KEY: bed.org.writeKey,
    BASE_URL: bed.baseUrl,
    EVENT_ID: String(eventId),
    BODY: body,
    SIGNATURE: signPayload("whsec_compiled", body),
    ...(dropGlobalCrypto ? { DROP_GLOBAL_CRYPTO: "1" } : {}),
  }));

describe("the packed package", () => {
  it("holds its build, types and README, and neither sources nor tests", () => {
    expect(installed.files).toEqual(expect.arrayContaining(SHIPPED_FILES));
    expect(installed.unshippable).toEqual([]);
  });

  it("runs on this Node", async () => {
    const result = await check(process.execPath, false);
    expect(result).toMatchObject({ globalCrypto: true, id: expect.any(Number), missing: true, manifest, envelope: JSON.parse(body) });
    expect(result.names.length).toBeGreaterThanOrEqual(1);
  });

  it("runs on this Node without a global crypto (as Node 18)", async () => {
    expect(await check(process.execPath, true)).toMatchObject({ globalCrypto: false, missing: true, manifest, envelope: JSON.parse(body) });
  });

  it("runs on an older Node from the PATH, when there is one", async (context) => {
    if (older === undefined) return context.skip("no older Node on the PATH");
    const result = await check(older, false);
    expect(result.node).not.toBe(process.version);
    expect(result).toMatchObject({ missing: true, manifest, envelope: JSON.parse(body) });
    expect(await check(older, true)).toMatchObject({ globalCrypto: false, missing: true, manifest, envelope: JSON.parse(body) });
  });
});
