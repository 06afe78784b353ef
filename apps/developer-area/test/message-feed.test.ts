import { Clients, Events } from "@platter/application";
import { apiKeyActor, encodeCursor, generateSigningSecret, messageFeedListing } from "@platter/domain";
import { UNTHROTTLED } from "@platter/ops";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { backdateHistory, createOrganization, nothingHeld, type OrganizationFixture, testDeliveryPolicy } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type RunningArea, startArea } from "./developer-area-harness.ts";

/**
 * The message feed over real HTTP (`GET /cli/messages`, what the SDK's `messages.list` and `platter
 * messages tail` read): with an API key, the organization's messages oldest first, each envelope the
 * bytes its deliveries send; a receiver that was down for an hour (its messages' rows moved back in
 * time) catches up from its last cursor with no gap and no repeat; filtered by type, started at a
 * time; another organization's key sees none of it; a read-only key is refused; bad input is a 400 JSON answer; the key's rate
 * limits count each read.
 */

let area: RunningArea;
let org: OrganizationFixture;
let other: OrganizationFixture;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"));
  org = await createOrganization(area.db, "Feed Catering");
  other = await createOrganization(area.db, "Other Catering");
});
afterAll(() => area?.stop());

const rows = <Row>(statement: string, params: unknown[] = []) => area.db.orm.em.getConnection().execute<Row[]>(statement, params);

interface FeedAnswer {
  readonly data: ReadonlyArray<{ readonly id: string; readonly type: string; readonly created_at: string; readonly body: string | null; readonly cursor: string }>;
  readonly has_more: boolean;
  readonly next_cursor: string | null;
}

/** One `GET /cli/messages` with `key`; states the status expected. */
const read = async (key: string, query: Record<string, string>, status = 200): Promise<FeedAnswer & { readonly error?: string }> => {
  const response = await fetch(`${area.origin}/cli/messages?${new URLSearchParams(query).toString()}`, { headers: { authorization: `Bearer ${key}` } });
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  return (await response.json()) as FeedAnswer;
};

/** Reads every page from `cursor` (a receiver catching up, `limit` at a time); the messages read and the cursor to resume from. */
const catchUp = async (key: string, cursor: string | undefined, query: Record<string, string> = {}) => {
  const messages: Array<FeedAnswer["data"][number]> = [];
  let resume = cursor;
  for (let pages = 0; pages < 100; pages += 1) {
    const page = await read(key, { limit: "4", ...query, ...(resume === undefined ? {} : { cursor: resume }) });
    messages.push(...page.data);
    resume = page.data.at(-1)?.cursor ?? resume;
    if (!page.has_more) break;
  }
  return { messages, cursor: resume };
};

const ids = (statement: string, params: unknown[]) => rows<{ envelope_id: string }>(statement, params).then((found) => found.map((row) => row.envelope_id));

describe("the message feed", () => {
  it("catches a receiver that was down for an hour up from its last cursor: every message once, in order, the bytes delivered", async () => {
    const actor = apiKeyActor(org.scope);
    await area.db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://198.51.100.20/hook", [], generateSigningSecret())));
    // Yesterday's messages, read before the receiver went down.
    for (const name of ["Ada", "Grace", "Edsger"]) await area.db.run(Clients.create(actor, { name }));
    await backdateHistory(area.db.url, "m.organization_id = $1", [org.id], "m.created_at - interval '1 day'");
    const before = await catchUp(org.writeKey, undefined);
    expect(before.messages.map((m) => m.id)).toEqual(await ids("select envelope_id from webhook_messages where organization_id = ? order by created_at, id", [org.id]));

    // Down for an hour: eleven messages made meanwhile, their rows moved back over that hour, in threes at one time (ties broken by id).
    for (let i = 0; i < 11; i += 1) {
      await area.db.run(i % 2 === 0 ? Clients.create(actor, { name: `Client ${i}` }) : Events.create(actor, { name: `Gala ${i}` }));
    }
    await backdateHistory(
      area.db.url, "m.organization_id = $1 and m.created_at > now() - interval '1 hour'", [org.id],
      `now() - interval '1 hour' + ((select count(*) from webhook_messages x
         where x.organization_id = m.organization_id and x.created_at > now() - interval '1 hour' and x.id < m.id) / 3) * interval '5 minutes'`,
    );
    const missed = await ids("select envelope_id from webhook_messages where organization_id = ? and created_at > now() - interval '2 hours' order by created_at, id", [org.id]);
    expect(missed).toHaveLength(11);

    const after = await catchUp(org.writeKey, before.cursor);
    expect(after.messages.map((m) => m.id)).toEqual(missed);
    // Caught up: nothing more, nothing again.
    expect((await catchUp(org.writeKey, after.cursor)).messages).toEqual([]);

    // Each envelope is the exact bytes its delivery sends (the dispatcher's claim builds them).
    const claimed = await area.db.run(DeliveryQueue.use((queue) => queue.claimDue(100, 30_000, testDeliveryPolicy, nothingHeld)));
    const sent = new Map(claimed.due.map((delivery) => [delivery.envelopeId, delivery.body]));
    expect(sent.size).toBe(14);
    for (const message of [...before.messages, ...after.messages]) {
      expect(message.body).toBe(sent.get(message.id));
      expect(JSON.parse(message.body!)).toMatchObject({ id: message.id, type: message.type, created_at: message.created_at });
    }
  });

  it("filters by event type and starts at a time within retention", async () => {
    const events = await ids("select envelope_id from webhook_messages where organization_id = ? and type = 'event.created' order by created_at, id", [org.id]);
    expect(events.length).toBeGreaterThan(0);
    expect((await catchUp(org.writeKey, undefined, { type: "event.created" })).messages.map((m) => m.id)).toEqual(events);
    const [since] = await rows<{ at: string }>("select to_char((now() - interval '52 minutes') at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') as at");
    const recent = await ids("select envelope_id from webhook_messages where organization_id = ? and created_at >= ?::timestamptz order by created_at, id", [org.id, since!.at]);
    expect(recent.length).toBeGreaterThan(0);
    expect((await catchUp(org.writeKey, undefined, { since: since!.at })).messages.map((m) => m.id)).toEqual(recent);
  });

  it("shows another organization's key none of it, even from a cursor of this one's", async () => {
    const own = await read(org.writeKey, {});
    expect(own.data.length).toBeGreaterThan(0);
    expect((await read(other.writeKey, {})).data).toEqual([]);
    expect((await read(other.writeKey, { cursor: encodeCursor(messageFeedListing.endpoint, ["2000-01-01T00:00:00.000Z", 1]) })).data).toEqual([]);
  });

  it.each<[string, Record<string, string>, string]>([
    ["an unknown type", { type: "invoice.deleted" }, "unknown event type"],
    ["a since that is not a time", { since: "yesterday" }, "since must be a time"],
    ["another list's cursor", { cursor: encodeCursor("deliveries", ["2026-11-01T10:00:00.000Z", 42]) }, "cursor"],
  ])("refuses %s with a 400 naming it", async (_case, query, text) => {
    const answer = await read(org.writeKey, query, 400);
    expect(answer.error).toContain(text);
  });

  it.each<[string, string]>([["no key", ""], ["an unknown key", "platter_test_rw_unknown"]])("refuses %s with a 401", async (_case, key) => {
    await read(key, {}, 401);
  });

  it("refuses a read-only key with a 403, as platter listen does: the payloads carry what the read API does not show", async () => {
    const answer = await read(org.readKey, {}, 403);
    expect(answer.error).toBeTypeOf("string");
  });
});

describe("the message feed's rate limits", () => {
  let limited: RunningArea;
  let keyed: OrganizationFixture;
  beforeAll(async () => {
    limited = await startArea(inject("pgAdminUrl"), "'self'", {
      rateLimits: { ...UNTHROTTLED, keyRequestsPerSecond: 1, keyRequestBurst: 3, authFailures: 3, authFailureWindowSeconds: 60 },
    });
    keyed = await createOrganization(limited.db, "Busy Catering");
  });
  afterAll(() => limited?.stop());

  it("counts a key's reads as the other /cli/ routes do: past its burst, a 429 with Retry-After", async () => {
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 4; i += 1) {
      const response = await fetch(`${limited.origin}/cli/messages`, { headers: { authorization: `Bearer ${keyed.writeKey}` } });
      statuses.push(response.status);
      retryAfter = response.headers.get("retry-after");
      await response.body?.cancel();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThan(0);
  });
});
