import {
  auditLogListing, clientListing, type DatabaseUnavailable, deliveryLogListing, encodeCursor, eventListing, InvalidCursor, invoiceListing, type Listing, type ListPage, messageFeedListing,
  operatorActor, type OrgScope, type PageRequest, parsePageRequest, recipeListing, requestLogListing, type SortKey,
} from "@platter/domain";
import { Effect, Result } from "effect";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  AuditLog, ClientRepository, DeliveryRepository, EventRepository, HistoryPartitions, InvoiceRepository, type Persistence, RecipeRepository, REQUEST_HISTORY, RequestLog, WEBHOOK_HISTORY, WebhookMessages,
} from "../src/index.ts";
import { Seeding } from "@platter/seeds";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * One test for every paged list (the API's four, the Developer area's delivery, request and audit
 * logs, each log filtered by a time range too, and the message feed, oldest first), all read by `readKeysetPage`: two organizations
 * with rows whose sort keys tie in threes, walked page by page with a small limit, give every row
 * of their own organization exactly once, in the listing's order (the order of its index, read
 * by SQL), none of the other's; a bad cursor is refused as `InvalidCursor` before any read. The
 * lists shown without paging (the CLI's deliveries, the audit log's latest entries) are the first
 * rows of the same order.
 */

const ROWS = 20;
const LIMIT = 3;
const BASE = Date.parse("2026-03-01T09:00:00.000Z");
/** The time of group `n` of three rows: 1.5 s apart, so milliseconds count. */
const timeOf = (group: number): string => new Date(BASE + group * 1_500).toISOString();
/** A window of the seeded times: groups 1 to 5 (a `from` included, a `to` excluded). */
const WINDOW = { from: timeOf(1), to: timeOf(6) };

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;

const sql = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const idsOf = async (statement: string, params: unknown[]) => (await sql<{ id: string }>(statement, params)).map((row) => Number(row.id));

/** One paged list: how its rows are seeded, read a page at a time, and expected (its index's order, by SQL). */
interface PagedList {
  readonly name: string;
  readonly listing: Listing<any, SortKey>;
  readonly seed: (org: OrganizationFixture) => Promise<unknown>;
  readonly read: (scope: OrgScope, page: PageRequest<any>) => Effect.Effect<ListPage<{ readonly id: number }>, DatabaseUnavailable, Persistence>;
  readonly expected: (organizationId: number) => Promise<number[]>;
}

/** Ties the seeded rows' time column in threes (group = position / 3), in id order. */
const tieTimes = (table: string, column: string, organizationId: number) =>
  sql(
    `update ${table} t set ${column} = ?::timestamptz + (g.position / 3) * interval '1.5 seconds'
     from (select id, (row_number() over (order by id) - 1)::int as position from ${table} where organization_id = ?) g
     where t.id = g.id`,
    [new Date(BASE).toISOString(), organizationId],
  );

const insertSeries = (statement: string) => async (org: OrganizationFixture) => {
  await sql(statement, [org.id, ROWS]);
};

/** Names that tie in threes and sort differently by bytes than in a locale. */
const NAME = `(array['apple', 'Apple', 'Éclair', 'zucchini', '10 Layer', '9 Grain'])[1 + (g / 3) % 6] || ' ' || (g / 18)`;

const seedDeliveries = async (org: OrganizationFixture) => {
  await db.run(Seeding.deliveryLog(org.scope, { deliveries: ROWS, endpoints: 1 }));
  await tieTimes("webhook_deliveries", "created_at", org.id);
  // A delivery's message and attempts carry its time, as when they are written together (the log reads them by it).
  await sql(
    `update webhook_messages m set created_at = d.created_at from webhook_deliveries d
     where d.message_id = m.id and d.organization_id = ? and m.organization_id = d.organization_id`,
    [org.id],
  );
  await sql(
    `update webhook_attempts a set delivery_created_at = d.created_at from webhook_deliveries d
     where a.delivery_id = d.id and d.organization_id = ? and a.organization_id = d.organization_id`,
    [org.id],
  );
};

const seedRequests = (org: OrganizationFixture) =>
  db.run(RequestLog.use((log) => log.append(Array.from({ length: ROWS }, (_, i) => ({
    organization_id: org.id, api_key_id: i % 2 === 0 ? org.readKeyId : org.writeKeyId, at: timeOf(Math.floor(i / 3)), method: "GET",
    route: "/v1/events", status: i % 4 === 0 ? 500 : 200, duration_ms: 1, request_id: `req_${org.id}_${i}`, error: null,
  })))));

const seedAudit = async (org: OrganizationFixture) => {
  const actor = operatorActor(org.scope, "root");
  await db.run(Effect.forEach(Array.from({ length: ROWS }, (_, i) => i), (i) =>
    AuditLog.use((log) => log.record(actor, i % 2 === 0 ? "api_key.created" : "webhook_endpoint.created", `row ${i}`)), { discard: true }));
  await tieTimes("audit_log", "at", org.id);
};

/**
 * Messages for the feed, their times tied in threes in the past; every message of the organization
 * (the delivery log's too) gets an envelope id naming its row, so the feed's rows map back to ids.
 */
const seedMessages = async (org: OrganizationFixture) => {
  await sql(`insert into webhook_messages (organization_id, type, payload, created_at)
    select ?, (array['client.created', 'event.created'])[1 + g % 2], '{"version": 1, "data": {}}'::jsonb,
      '2026-03-01T09:00:00Z'::timestamptz + (g / 3) * interval '1.5 seconds' from generate_series(0, ? - 1) g`, [org.id, ROWS]);
  await sql(`update webhook_messages set envelope_id = 'evt_row_' || id where organization_id = ?`, [org.id]);
};
/** A feed message's row id, from the envelope id `seedMessages` gave it. */
const rowOfEnvelope = (envelopeId: string) => ({ id: Number(envelopeId.replace("evt_row_", "")) });

const newestFirst = (table: string, column: string, where = "true") => (organizationId: number, params: unknown[] = []) =>
  idsOf(`select t.id from ${table} t where t.organization_id = ? and ${where} order by t.${column} desc, t.id desc`, [organizationId, ...params]);
const byName = (table: string) => (organizationId: number) =>
  idsOf(`select id from ${table} where organization_id = ? order by name, id`, [organizationId]);

const PAGED_LISTS: ReadonlyArray<PagedList> = [
  {
    name: "events (API)",
    listing: eventListing,
    seed: insertSeries(`insert into events (organization_id, name, created_at)
      select ?, 'Event ' || g, '2026-03-01T09:00:00Z'::timestamptz + (g / 3) * interval '1.5 seconds' from generate_series(0, ? - 1) g`),
    read: (scope, page) => EventRepository.use((events) => events.list(scope, page)),
    expected: (id) => newestFirst("events", "created_at")(id),
  },
  {
    name: "recipes (API)",
    listing: recipeListing,
    seed: insertSeries(`insert into recipes (organization_id, name, servings) select ?, ${NAME}, 4 from generate_series(0, ? - 1) g`),
    read: (scope, page) => RecipeRepository.use((recipes) => recipes.list(scope, page)),
    expected: byName("recipes"),
  },
  {
    name: "clients (API)",
    listing: clientListing,
    seed: insertSeries(`insert into clients (organization_id, name) select ?, ${NAME} from generate_series(0, ? - 1) g`),
    read: (scope, page) => ClientRepository.use((clients) => clients.list(scope, page)),
    expected: byName("clients"),
  },
  {
    name: "invoices (API)",
    listing: invoiceListing,
    seed: insertSeries(`insert into invoices (organization_id, number, currency, issue_date, due_date, created_at)
      select ?, 'INV-' || gen_random_uuid(), 'EUR', date '2026-03-01', date '2026-03-31',
        '2026-03-01T09:00:00Z'::timestamptz + (g / 3) * interval '1.5 seconds' from generate_series(0, ? - 1) g`),
    read: (scope, page) => InvoiceRepository.use((invoices) => invoices.list(scope, page)),
    expected: (id) => newestFirst("invoices", "created_at")(id),
  },
  {
    name: "delivery log (Developer area)",
    listing: deliveryLogListing,
    seed: seedDeliveries,
    read: (scope, page) => DeliveryRepository.use((deliveries) => deliveries.log(scope, {}, page)),
    expected: (id) => newestFirst("webhook_deliveries", "created_at")(id),
  },
  {
    name: "delivery log in a time range",
    listing: deliveryLogListing,
    seed: async () => {},
    read: (scope, page) => DeliveryRepository.use((deliveries) => deliveries.log(scope, WINDOW, page)),
    expected: (id) => newestFirst("webhook_deliveries", "created_at", "t.created_at >= ?::timestamptz and t.created_at < ?::timestamptz")(id, [WINDOW.from, WINDOW.to]),
  },
  {
    name: "request log (Developer area)",
    listing: requestLogListing,
    seed: seedRequests,
    read: (scope, page) => RequestLog.use((log) => log.list(scope, {}, page)),
    expected: (id) => newestFirst("api_requests", "at")(id),
  },
  {
    name: "request log in a time range, its 2xx",
    listing: requestLogListing,
    seed: async () => {},
    read: (scope, page) => RequestLog.use((log) => log.list(scope, { ...WINDOW, statusClass: "2xx" }, page)),
    expected: (id) => newestFirst("api_requests", "at", "t.at >= ?::timestamptz and t.at < ?::timestamptz and t.status < 300")(id, [WINDOW.from, WINDOW.to]),
  },
  {
    name: "audit log (Developer area)",
    listing: auditLogListing,
    seed: seedAudit,
    read: (scope, page) => AuditLog.use((log) => log.page(scope, {}, page)),
    expected: (id) => newestFirst("audit_log", "at")(id),
  },
  {
    name: "audit log in a time range, one action",
    listing: auditLogListing,
    seed: async () => {},
    read: (scope, page) => AuditLog.use((log) => log.page(scope, { ...WINDOW, action: "api_key.created" }, page)),
    expected: (id) => newestFirst("audit_log", "at", "t.at >= ?::timestamptz and t.at < ?::timestamptz and t.action = 'api_key.created'")(id, [WINDOW.from, WINDOW.to]),
  },
  // Last: its seed renames the envelopes of every message seeded before it.
  {
    name: "message feed (CLI routes, SDK)",
    listing: messageFeedListing,
    seed: seedMessages,
    read: (scope, page) => Effect.map(WebhookMessages.use((messages) => messages.feed(scope, { eventTypes: [] }, page)),
      (read) => ({ ...read, data: read.data.map((m) => rowOfEnvelope(m.id)) })),
    expected: (id) => idsOf("select id from webhook_messages where organization_id = ? order by created_at, id", [id]),
  },
  {
    name: "message feed of one type, since a time",
    listing: messageFeedListing,
    seed: async () => {},
    // `since` is a start before its first message (parseMessageFeedRequest), as a first page's cursor.
    read: (scope, page) => Effect.map(WebhookMessages.use((messages) => messages.feed(scope, { eventTypes: ["client.created"] }, page.after === undefined ? { ...page, after: [WINDOW.from, 0] } : page)),
      (read) => ({ ...read, data: read.data.map((m) => rowOfEnvelope(m.id)) })),
    expected: (id) => idsOf("select id from webhook_messages where organization_id = ? and type = 'client.created' and created_at >= ?::timestamptz order by created_at, id",
      [id, WINDOW.from]),
  },
];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  // History and requests written in March: partitions back to then (a month each).
  await db.run(HistoryPartitions.use((h) => h.cover(WEBHOOK_HISTORY, new Date(BASE), 30 * 24 * 3600_000)));
  await db.run(HistoryPartitions.use((h) => h.cover(REQUEST_HISTORY, new Date(BASE), 30 * 24 * 3600_000)));
  a = await createOrganization(db, "Lists A");
  b = await createOrganization(db, "Lists B");
  for (const list of PAGED_LISTS) {
    await list.seed(a);
    await list.seed(b);
  }
});
afterAll(() => db?.dispose());

/** Every row of the list for `scope`, following each page's `next_cursor` through `parsePageRequest`, as the edges do. */
const walk = async (list: PagedList, scope: OrgScope): Promise<{ ids: number[]; pages: number }> => {
  const ids: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const request = Result.getOrThrow(parsePageRequest(list.listing, { limit: String(LIMIT), ...(cursor === undefined ? {} : { cursor }) }));
    const page = await db.run(list.read(scope, request));
    expect(page.data.length).toBeLessThanOrEqual(LIMIT);
    expect(page.has_more).toBe(page.next_cursor !== null);
    ids.push(...page.data.map((row) => row.id));
    cursor = page.next_cursor ?? undefined;
    pages += 1;
  } while (cursor !== undefined && pages <= ROWS);
  return { ids, pages };
};

describe.each(PAGED_LISTS)("$name", (list) => {
  it("walks every row of each organization exactly once, in the listing's order, none of the other's", async () => {
    const expectedA = await list.expected(a.id);
    const expectedB = await list.expected(b.id);
    // Ties to break, rows to page through, and another organization's rows to leave out.
    expect(expectedA.length).toBeGreaterThan(2 * LIMIT);
    expect(expectedB.length).toBeGreaterThan(2 * LIMIT);
    for (const [org, expected, other] of [[a, expectedA, expectedB], [b, expectedB, expectedA]] as const) {
      const { ids, pages } = await walk(list, org.scope);
      expect(ids).toEqual(expected);
      expect(new Set(ids).size).toBe(ids.length);
      expect(pages).toBe(Math.ceil(expected.length / LIMIT));
      expect(ids.filter((id) => other.includes(id))).toEqual([]);
    }
  });

  it.each<[string, (listing: Listing<any, SortKey>) => string]>([
    ["not a cursor", () => "not-a-cursor"],
    ["altered", (listing) => `${encodeCursor(listing.endpoint, ["2026-03-01T09:00:00.000Z", 5]).slice(0, -2)}AA`],
    ["another list's", (listing) => encodeCursor(listing.endpoint === "events" ? "requests" : "events", ["2026-03-01T09:00:00.000Z", 5])],
    ["a key of the wrong shape", (listing) => encodeCursor(listing.endpoint, [5, "2026-03-01T09:00:00.000Z"])],
    ["a key too short", (listing) => encodeCursor(listing.endpoint, [5])],
    ["an id of zero", (listing) => encodeCursor(listing.endpoint, [listing === clientListing || listing === recipeListing ? "apple" : "2026-03-01T09:00:00.000Z", 0])],
  ])("refuses a cursor %s as InvalidCursor", (_case, cursorFor) => {
    const refused = parsePageRequest(list.listing, { limit: String(LIMIT), cursor: cursorFor(list.listing) });
    expect(Result.getOrThrow(Result.flip(refused))).toBeInstanceOf(InvalidCursor);
  });
});

describe("lists shown without paging: the first rows of the same order", () => {
  it.each<[string, () => Promise<ReadonlyArray<{ readonly id: number }>>, () => Promise<number[]>]>([
    ["the CLI's deliveries", () => db.run(DeliveryRepository.use((deliveries) => deliveries.list(a.scope, { limit: 7 }))), () => newestFirst("webhook_deliveries", "created_at")(a.id)],
    ["the audit log's latest entries", () => db.run(AuditLog.use((log) => log.list(a.scope, 7))), () => newestFirst("audit_log", "at")(a.id)],
  ])("%s", async (_name, read, expected) => {
    expect((await read()).map((row) => row.id)).toEqual((await expected()).slice(0, 7));
  });
});

describe("one page reader", () => {
  /** What only a page reader writes: a page's envelope, a cursor's key or a page's limit. */
  const PAGE_READING = /assemblePage|page\.after|page\.limit/;

  it("no storage file but keyset-page.ts assembles a page, compares a cursor's key or reads a page's limit", () => {
    const source = join(import.meta.dirname, "../src");
    const files = readdirSync(source, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".ts"));
    expect(files).toContain("keyset-page.ts");
    const readers = files.filter((file) => PAGE_READING.test(readFileSync(join(source, file), "utf8")));
    expect(readers).toEqual(["keyset-page.ts"]);
  });
});
