import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startAnotherInstance, startApiUnderTest } from "./api-harness.ts";
import { listPage } from "./list-walk.ts";
import { LISTED_RESOURCES, tiedKeys } from "./listed-resources.ts";

/** Cursors: bound to their endpoint, refused when corrupted, valid across restarts. */

let api: ApiUnderTest;
let org: OrganizationFixture;
/** A second-page cursor issued by each endpoint. */
const cursors = new Map<string, string>();

beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Cursors");
  for (const resource of LISTED_RESOURCES) {
    await resource.insert(api.sql, org.id, tiedKeys(30));
    const page = await listPage(api, resource.path, org.readKey, { limit: 10 });
    cursors.set(resource.name, page.body.next_cursor);
  }
});
afterAll(() => api?.close());

const expectInvalidCursor = async (path: string, cursor: string) => {
  const response = await api.call("GET", `${path}?${new URLSearchParams({ cursor })}`, { key: org.readKey });
  expect(response.status).toBe(400);
  expect(response.body).toEqual({ error: "Invalid cursor" });
};

const crossEndpointPairs = LISTED_RESOURCES.flatMap((issuer) =>
  LISTED_RESOURCES.filter((user) => user !== issuer).map((user) => ({ issuer: issuer.name, user: user.name, path: user.path })),
);

describe("a cursor issued by another endpoint", () => {
  it.each(crossEndpointPairs)("from /$issuer used on /$user → 400 Invalid cursor", async ({ issuer, path }) => {
    await expectInvalidCursor(path, cursors.get(issuer)!);
  });
});

describe.each(LISTED_RESOURCES)("a corrupted cursor on $path", (resource) => {
  const valid = () => cursors.get(resource.name)!;
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);

  it.each([
    ["truncated by one character", (c: string) => c.slice(0, -1)],
    ["truncated to half", (c: string) => c.slice(0, Math.floor(c.length / 2))],
    ["with a character appended", (c: string) => `${c}A`],
    ["with its first character changed", (c: string) => flip(c, 0)],
    ["with a middle character changed", (c: string) => flip(c, Math.floor(c.length / 2))],
    ["with its last character changed", (c: string) => flip(c, c.length - 1)],
    ["reversed", (c: string) => [...c].reverse().join("")],
    ["base64 padded", (c: string) => `${c}==`],
    ["doubled", (c: string) => c + c],
    ["upper-cased", (c: string) => c.toUpperCase()],
    ["with a space inside", (c: string) => `${c.slice(0, 5)} ${c.slice(5)}`],
  ])("%s → 400 Invalid cursor", async (_case, corrupt) => {
    const cursor = corrupt(valid());
    expect(cursor).not.toBe(valid());
    await expectInvalidCursor(resource.path, cursor);
  });

  it.each([
    ["empty", ""],
    ["a word", "abc"],
    ["punctuation", "!!!"],
    ["JSON", '{"id":1}'],
    ["base64 of a plain id", Buffer.from("42").toString("base64url")],
    ["base64 of a key without checksum", Buffer.from(JSON.stringify([1, resource.name, "2026-01-01T00:00:00.000Z", 1])).toString("base64url")],
    ["very long", "A".repeat(5_000)],
    ["NUL", "\u0000"],
    ["unicode", "ünïcødé🍰"],
  ])("%s → 400 Invalid cursor", async (_case, cursor) => {
    await expectInvalidCursor(resource.path, cursor);
  });
});

describe("cursor lifetime", () => {
  it.each(LISTED_RESOURCES)("a cursor from $path stays valid on another API instance started on the same database", async (resource) => {
    const cursor = cursors.get(resource.name)!;
    const expected = await listPage(api, resource.path, org.readKey, { limit: 10, cursor });
    const restarted = await startAnotherInstance(api.db);
    try {
      const page = await listPage(restarted, resource.path, org.readKey, { limit: 10, cursor });
      expect(page.body).toEqual(expected.body);
      expect(page.body.data).toHaveLength(10);
      const followed = await listPage(restarted, resource.path, org.readKey, { limit: 10, cursor: page.body.next_cursor });
      expect(followed.body.data).toHaveLength(10);
      expect(followed.body.has_more).toBe(false);
    } finally {
      await restarted.stop();
    }
  });

  it.each(LISTED_RESOURCES)("a cursor from $path stays valid when the row it was anchored on is deleted", async (resource) => {
    const own = await api.newOrganization(`Anchor ${resource.name}`);
    await resource.insert(api.sql, own.id, tiedKeys(12));
    const first = await listPage(api, resource.path, own.readKey, { limit: 4 });
    const reference = await listPage(api, resource.path, own.readKey, { limit: 12 });
    await resource.remove(api.sql, [first.body.data.at(-1).id]);
    const next = await listPage(api, resource.path, own.readKey, { limit: 4, cursor: first.body.next_cursor });
    expect(next.body.data.map((row: any) => row.id)).toEqual(reference.body.data.slice(4, 8).map((row: any) => row.id));
  });
});
