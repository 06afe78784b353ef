import { EVENT_STATUSES, EVENT_TYPES, INVOICE_STATUSES, type OrgScope } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { EventRepository, InvoiceRepository } from "@platter/persistence";
import { Operator } from "@platter/persistence/operator";
import { type BulkSeedOptions, type SeedProgress, Seeding } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

/** Bulk-seeds the organization `id` the way the CLI does: the operator's scope of it first. */
const seedBulk = (id: number, options: BulkSeedOptions, onProgress?: SeedProgress) =>
  db.run(
    Effect.flatMap(Operator.use((o) => o.scopeOf(id)), (scope: OrgScope) => Seeding.bulk(scope, options, onProgress)),
  );

const query = <Row>(sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(sql, params);

const countsOf = async (org: OrganizationFixture) => {
  const [row] = await query<{ clients: string; events: string; invoices: string; lines: string }>(
    `select (select count(*) from clients where organization_id = ?) as clients,
       (select count(*) from events where organization_id = ?) as events,
       (select count(*) from invoices where organization_id = ?) as invoices,
       (select count(*) from invoice_line_items where organization_id = ?) as lines`,
    [org.id, org.id, org.id, org.id],
  );
  return { clients: Number(row!.clients), events: Number(row!.events), invoices: Number(row!.invoices), lines: Number(row!.lines) };
};

describe("seedBulk", () => {
  let org: OrganizationFixture;
  let other: OrganizationFixture;
  const progress = new Map<string, { done: number; total: number; calls: number }>();

  beforeAll(async () => {
    org = await createOrganization(db, "Bulk Catering");
    other = await createOrganization(db, "Bystander Catering");
    await seedBulk(org.id, { events: 2_000, clients: 300, invoices: 250 }, (label, done, total) => {
      const seen = progress.get(label);
      expect(done).toBeGreaterThan(seen?.done ?? 0);
      progress.set(label, { done, total, calls: (seen?.calls ?? 0) + 1 });
    });
  });

  it("inserts exactly the requested rows into the organization and nothing elsewhere", async () => {
    expect(await countsOf(org)).toMatchObject({ clients: 300, events: 2_000, invoices: 250 });
    expect(await countsOf(other)).toEqual({ clients: 0, events: 0, invoices: 0, lines: 0 });
  });

  it("reports progress up to each total", () => {
    expect(Object.fromEntries([...progress].map(([label, { done, total }]) => [label, { done, total }]))).toEqual({
      clients: { done: 300, total: 300 },
      events: { done: 2_000, total: 2_000 },
      invoices: { done: 250, total: 250 },
    });
  });

  it("gives every invoice one to five line items of its own organization", async () => {
    const rows = await query<{ lines: string; foreign_lines: string }>(
      `select count(l.id) as lines, count(l.id) filter (where l.organization_id <> i.organization_id) as foreign_lines
       from invoices i left join invoice_line_items l on l.invoice_id = i.id
       where i.organization_id = ? group by i.id`,
      [org.id],
    );
    expect(rows).toHaveLength(250);
    for (const row of rows) {
      expect(Number(row.lines)).toBeGreaterThanOrEqual(1);
      expect(Number(row.lines)).toBeLessThanOrEqual(5);
      expect(Number(row.foreign_lines)).toBe(0);
    }
  });

  it("links events and invoices only to the organization's own records", async () => {
    const [row] = await query<{ foreign: string; linked: string }>(
      `select
         (select count(*) from events e join clients c on c.id = e.client_id
           where e.organization_id = ? and c.organization_id <> e.organization_id)
         + (select count(*) from invoices i left join clients c on c.id = i.client_id left join events e on e.id = i.event_id
           where i.organization_id = ? and (c.organization_id <> i.organization_id or e.organization_id <> i.organization_id))
           as foreign,
         (select count(*) from events where organization_id = ? and client_id is not null) as linked`,
      [org.id, org.id, org.id],
    );
    expect(Number(row!.foreign)).toBe(0);
    expect(Number(row!.linked)).toBeGreaterThan(0);
  });

  it("writes values the domain accepts, varied, with some equal timestamps", async () => {
    const [row] = await query<Record<string, string>>(
      `select count(distinct created_at) as distinct_times, count(distinct name) as names,
         count(distinct status) as statuses, count(distinct event_type) as types,
         count(*) filter (where status <> all (?::text[]) or (event_type is not null and event_type <> all (?::text[]))) as unknown,
         min(created_at) < now() - interval '2 years' as spans_years, max(created_at) <= now() as not_future
       from events where organization_id = ?`,
      [`{${EVENT_STATUSES.join(",")}}`, `{${EVENT_TYPES.join(",")}}`, org.id],
    );
    expect(Number(row!["unknown"])).toBe(0);
    expect(Number(row!["distinct_times"])).toBeGreaterThan(1_500);
    expect(Number(row!["distinct_times"])).toBeLessThan(2_000);
    expect(Number(row!["names"])).toBeGreaterThan(50);
    expect(Number(row!["statuses"])).toBe(EVENT_STATUSES.length);
    expect(Number(row!["types"])).toBe(EVENT_TYPES.length);
    expect(row!["spans_years"]).toBe(true);
    expect(row!["not_future"]).toBe(true);
    const [clients] = await query<{ emails: string; phones: string; companies: string }>(
      "select count(email) as emails, count(phone) as phones, count(company) as companies from clients where organization_id = ?",
      [org.id],
    );
    for (const filled of Object.values(clients!)) expect(Number(filled)).toBeGreaterThan(0);
  });

  it("produces rows the repositories read back: events page through, paid invoices are settled", async () => {
    const seen = new Set<number>();
    let after: readonly [string, number] | undefined;
    for (;;) {
      const page = await db.run(EventRepository.use((events) => events.list(org.scope, { limit: 500, after })));
      for (const event of page.data) seen.add(event.id);
      if (!page.has_more) break;
      const last = page.data[page.data.length - 1]!;
      after = [last.created_at, last.id];
    }
    expect(seen.size).toBe(2_000);

    const invoices = await db.run(InvoiceRepository.use((all) => all.list(org.scope, { limit: 500, after: undefined })));
    expect(invoices.data).toHaveLength(250);
    for (const invoice of invoices.data) {
      expect(INVOICE_STATUSES).toContain(invoice.status);
      expect(invoice.currency).toBe("EUR");
      expect(invoice.total).toBeGreaterThan(0);
      if (invoice.status === "paid") expect(invoice.balance_due).toBe(0);
      else expect(invoice.amount_paid).toBe(0);
    }
  });

  it("seeds the same organization again without clashing invoice numbers", async () => {
    await seedBulk(org.id, { events: 100, clients: 10, invoices: 250 });
    expect(await countsOf(org)).toMatchObject({ clients: 310, events: 2_100, invoices: 500 });
    const [row] = await query<{ numbers: string }>(
      "select count(distinct number) as numbers from invoices where organization_id = ?",
      [org.id],
    );
    expect(Number(row!.numbers)).toBe(500);
  });

  it("numbers invoices INV-<batch>-0000001 upwards", async () => {
    const [row] = await query<{ number: string }>(
      "select number from invoices where organization_id = ? order by id limit 1",
      [org.id],
    );
    expect(row!.number).toMatch(/^INV-[0-9A-F]{8}-0000001$/);
  });

  it("refuses an unknown organization or a bad count before writing anything", async () => {
    const before = await countsOf(other);
    await expect(seedBulk(999_999, { events: 1, clients: 1, invoices: 1 })).rejects.toMatchObject({ _tag: "NotFound" });
    await expect(seedBulk(other.id, { events: -1, clients: 1, invoices: 0 })).rejects.toMatchObject({ _tag: "InvalidInput" });
    await expect(seedBulk(other.id, { events: 1.5, clients: 1, invoices: 0 })).rejects.toMatchObject({ _tag: "InvalidInput" });
    expect(await countsOf(other)).toEqual(before);
  });

  it("seeds nothing when every count is zero", async () => {
    await seedBulk(other.id, { events: 0, clients: 0, invoices: 0 });
    expect(await countsOf(other)).toEqual({ clients: 0, events: 0, invoices: 0, lines: 0 });
  });
});

/** Rows of `table` in the organization whose `created_at` is earlier than the row before them by id, and ties. */
const orderOf = async (table: "clients" | "events", organizationId: number) => {
  const [row] = await query<{ earlier: string; ties: string }>(
    `select count(*) filter (where created_at < previous) as earlier, count(*) filter (where created_at = previous) as ties
     from (select created_at, lag(created_at) over (order by id) as previous from ${table} where organization_id = ?) t`,
    [organizationId],
  );
  return { earlier: Number(row!.earlier), ties: Number(row!.ties) };
};

describe("seedBulk in several chunks", () => {
  it("writes chunks side by side, ids still rising with created_at, each events chunk linked to its share of the clients", async () => {
    const org = await createOrganization(db, "Chunked Catering");
    const reports: Record<string, number[]> = {};
    await seedBulk(org.id, { events: 120_000, clients: 60_000, invoices: 0 }, (label, done) => (reports[label] ??= []).push(done));
    // A report per chunk, whichever of two ends first: clients in chunks of 50,000 and 10,000, events of 50,000, 50,000 and 20,000.
    expect(reports["clients"]).toHaveLength(2);
    expect(reports["clients"]!.at(-1)).toBe(60_000);
    expect(reports["events"]).toHaveLength(3);
    expect(reports["events"]!.at(-1)).toBe(120_000);
    expect(await countsOf(org)).toEqual({ clients: 60_000, events: 120_000, invoices: 0, lines: 0 });
    // Every tenth row ties with the one before, across chunk boundaries too; no row is earlier than its predecessor.
    expect(await orderOf("clients", org.id)).toEqual({ earlier: 0, ties: 6_000 });
    expect(await orderOf("events", org.id)).toEqual({ earlier: 0, ties: 12_000 });
    const [links] = await query<{ foreign: string; linked: string; clients: string }>(
      `select count(*) filter (where c.organization_id <> e.organization_id) as foreign, count(*) as linked, count(distinct c.id) as clients
       from events e join clients c on c.id = e.client_id where e.organization_id = ?`,
      [org.id],
    );
    expect(Number(links!.foreign)).toBe(0);
    expect(Number(links!.linked)).toBeGreaterThan(80_000);
    // Each chunk links to its own share of the clients (at most 20,000 of them), so together they reach most.
    expect(Number(links!.clients)).toBeGreaterThan(30_000);
  });

  it("takes each chunk's ids from the sequence however far apart they come", async () => {
    const org = await createOrganization(db, "Sparse Catering");
    await query("alter sequence clients_id_seq increment by 3");
    try {
      await seedBulk(org.id, { events: 0, clients: 500, invoices: 0 });
    } finally {
      await query("alter sequence clients_id_seq increment by 1");
    }
    const [row] = await query<{ steps: string[] }>(
      "select array_agg(distinct step) as steps from (select id - lag(id) over (order by id) as step from clients where organization_id = ?) s where step is not null",
      [org.id],
    );
    expect(row!.steps).toEqual(["3"]);
    expect(await orderOf("clients", org.id)).toEqual({ earlier: 0, ties: 50 });
  });

  it("leaves the checks to the foreign-key triggers where the tables have a trigger of their own", async () => {
    const org = await createOrganization(db, "Triggered Catering");
    await query(`create table seeded_rows (n bigint not null);
      insert into seeded_rows values (0);
      create function count_seeded_row() returns trigger language plpgsql as $$ begin update seeded_rows set n = n + 1; return new; end $$;
      create trigger count_seeded_rows after insert on events for each row execute function count_seeded_row()`);
    try {
      await seedBulk(org.id, { events: 1_500, clients: 100, invoices: 0 });
      // Under session_replication_role = replica the trigger would not have fired.
      const [row] = await query<{ n: string }>("select n from seeded_rows");
      expect(Number(row!.n)).toBe(1_500);
    } finally {
      await query("drop trigger count_seeded_rows on events; drop function count_seeded_row(); drop table seeded_rows");
    }
    expect(await countsOf(org)).toMatchObject({ clients: 100, events: 1_500 });
    expect(await orderOf("events", org.id)).toEqual({ earlier: 0, ties: 150 });
  });
});
