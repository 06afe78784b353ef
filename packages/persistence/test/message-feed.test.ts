import { type MessageFeedFilter, messageFeedListing, parsePageRequest } from "@platter/domain";
import { Result } from "effect";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebhookMessages } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * The message feed's horizon: a message whose transaction is still open when a reader passes is
 * never left behind it. A transaction that started first and commits last writes the older message
 * (its `created_at` is its start); a reader following its cursor meanwhile is shown nothing from
 * that start on, and once it commits, reads it and then the younger one: every message once, in
 * order of creation. A cursor outlives its message: once retention removed it, the walk goes on at
 * the next message kept.
 */

let db: TestDatabase;
let org: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Feed horizon");
});
afterAll(() => db?.dispose());

const EVERY_TYPE: MessageFeedFilter = { eventTypes: [] };

/** Reads the feed from `cursor` to its end, as a receiver pulls it; returns the envelope ids read and the cursor to resume from. */
const pull = async (cursor: string | undefined): Promise<{ ids: string[]; cursor: string | undefined }> => {
  const ids: string[] = [];
  let resume = cursor;
  for (let pages = 0; pages < 20; pages += 1) {
    const request = Result.getOrThrow(parsePageRequest(messageFeedListing, { limit: "2", ...(resume === undefined ? {} : { cursor: resume }) }));
    const page = await db.run(WebhookMessages.use((messages) => messages.feed(org.scope, EVERY_TYPE, request)));
    ids.push(...page.data.map((m) => m.id));
    resume = page.data.at(-1)?.cursor ?? resume;
    if (!page.has_more) break;
  }
  return { ids, cursor: resume };
};

/** A message written on its own connection, in its own transaction: `insert` returns its envelope id. */
const writer = async () => {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return {
    begin: () => client.query("begin"),
    insert: async (): Promise<string> => (await client.query<{ envelope_id: string }>(
      `insert into webhook_messages (organization_id, type, payload) values ($1, 'client.created', '{"version": 1, "data": {}}') returning envelope_id`,
      [org.id],
    )).rows[0]!.envelope_id,
    commit: () => client.query("commit"),
    end: () => client.end(),
  };
};

describe("the message feed's horizon", () => {
  it("shows no message younger than an open transaction's start, so the open one's message is never skipped", async () => {
    const first = await writer();
    const early = await writer();
    try {
      const settled = await early.insert();
      // The older transaction: begun (and its message written) before the younger one commits.
      await first.begin();
      const older = await first.insert();
      const younger = await early.insert();

      const before = await pull(undefined);
      expect(before.ids).toEqual([settled]);

      await first.commit();
      const after = await pull(before.cursor);
      expect(after.ids).toEqual([older, younger]);
      expect([...before.ids, ...after.ids]).toEqual([settled, older, younger]);
      // Nothing more, nothing again.
      expect((await pull(after.cursor)).ids).toEqual([]);
    } finally {
      await first.end();
      await early.end();
    }
  });

  it("resumes from a cursor whose message retention has removed at the next message kept", async () => {
    const early = await writer();
    try {
      const [gone, kept] = [await early.insert(), await early.insert()];
      const all = await pull(undefined);
      const upTo = all.ids.indexOf(gone);
      expect(all.ids.slice(upTo)).toEqual([gone, kept]);
      const request = Result.getOrThrow(parsePageRequest(messageFeedListing, { limit: String(upTo + 1) }));
      const read = await db.run(WebhookMessages.use((messages) => messages.feed(org.scope, EVERY_TYPE, request)));
      expect(read.data.at(-1)!.id).toBe(gone);
      // The sweep removes the message (and everything before it) after the receiver read it.
      await db.orm.em.getConnection().execute("delete from webhook_messages where organization_id = ? and id <= (select id from webhook_messages where envelope_id = ?)", [org.id, gone]);
      expect((await pull(read.data.at(-1)!.cursor)).ids).toEqual([kept]);
    } finally {
      await early.end();
    }
  });
});
