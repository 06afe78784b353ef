import { randomBytes } from "node:crypto";
import type { MikroORM } from "@mikro-orm/postgresql";
import { EVENT_TYPES, type EventStatus, InvalidInput, type InvoiceStatus, type OrgScope } from "@platter/domain";

/**
 * Bulk seeding: large, realistic-looking data for one organization, fast. Every chunk is one
 * set-based `insert … select … from generate_series(…)` statement, so PostgreSQL generates the
 * rows itself and nothing crosses the wire but the statement.
 *
 * Each chunk is its own statement in autocommit, hence its own transaction: progress is visible to
 * other sessions as it happens, no transaction grows with the seed size, and an interrupted seed
 * leaves whole chunks behind (every invoice arrives together with its line items).
 *
 * `created_at` is spread over the past three years, increasing with insertion order like real data
 * (ids and timestamps agree), with every tenth row sharing its predecessor's timestamp so that
 * lists must break ties by id.
 */

export interface BulkSeedOptions {
  readonly events: number;
  readonly clients: number;
  readonly invoices: number;
}

export type SeedProgress = (label: string, done: number, total: number) => void;

const CHUNK_ROWS = { clients: 50_000, events: 50_000, invoices: 20_000 } as const;
const SPAN_MS = 3 * 365 * 24 * 60 * 60 * 1000;
/** Events and invoices link to at most this many of the seed's newest clients/events: bounded memory. */
const LINK_POOL = 100_000;

const FIRST_NAMES = [
  "Ada", "Alan", "Amara", "Anna", "Ben", "Chloe", "Daniel", "Elena", "Emma", "Farah", "Felix", "Grace", "Hana", "Hugo",
  "Isla", "Ivan", "Jonas", "Julia", "Kai", "Lena", "Leo", "Lucia", "Marco", "Maya", "Mila", "Noah", "Nora", "Omar",
  "Priya", "Rosa", "Sam", "Sofia", "Theo", "Yara", "Zoe",
];
const LAST_NAMES = [
  "Adams", "Bauer", "Bianchi", "Brown", "Costa", "Dubois", "Evans", "Fischer", "Garcia", "Hansen", "Ivanova", "Jensen",
  "Kowalski", "Lambert", "Lopez", "Martin", "Moreau", "Murphy", "Nielsen", "Novak", "Okafor", "Patel", "Rossi",
  "Santos", "Schmidt", "Silva", "Smith", "Tanaka", "Van Dijk", "Weber", "Wilson", "Young",
];
const COMPANIES = [
  "Acme Events", "Bluebird Studios", "Cedar & Co", "Northwind Traders", "Harbour Bank", "Lumen Labs", "Oakridge Legal",
  "Pioneer Logistics", "Quartz Media", "Riverside Clinic", "Summit Consulting", "Tidewater Hotels", "Urban Architects",
  "Vertex Software", "Willow School",
];
const EMAIL_DOMAINS = ["example.com", "example.org", "example.net", "mail.example", "corp.example"];
/** Labels for event names, aligned with EVENT_TYPES. */
const EVENT_LABELS: Record<(typeof EVENT_TYPES)[number], string> = {
  wedding: "Wedding", corporate: "Corporate Dinner", birthday: "Birthday Party", private_party: "Private Party",
  conference: "Conference Lunch", funeral: "Memorial Reception", festival: "Festival Catering", other: "Event",
};
const UPCOMING_STATUSES: readonly EventStatus[] = ["inquiry", "proposed", "confirmed"];
const LINE_DESCRIPTIONS = [
  "Canapés", "Three-course dinner", "Buffet lunch", "Service staff (hours)", "Bar package", "Wedding cake",
  "Equipment hire", "Delivery", "Venue setup", "Coffee and pastries",
];
const TAX_RATES_BASIS_POINTS = [0, 700, 1000, 2000];

/** Status literals in the statements, typed against the domain's lists. */
const eventStatus = (status: EventStatus): string => `'${status}'`;
const invoiceStatus = (status: InvoiceStatus): string => `'${status}'`;

/** An SQL array literal of our own constants (quotes doubled, never user input). */
const textArray = (values: readonly string[]): string =>
  `array[${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")}]::text[]`;
const intArray = (values: readonly number[]): string => `array[${values.map((v) => Math.trunc(v)).join(", ")}]::int[]`;
/** A uniformly chosen element of a 1-based SQL array literal. */
const pick = (array: string, length: number): string => `(${array})[1 + floor(random() * ${length})::int]`;

/**
 * `created_at` of the row at ordinal `n` (0-based) of `total`: increasing with `n`, a
 * deterministic jitter inside each step, and rows with n % 10 = 9 tied to their predecessor.
 * Parameters: start timestamp, step ms, step ms.
 */
const CREATED_AT = `(?::timestamptz + ((p * ?::bigint) + (hashint8(p)::bigint & 2147483647) % ?::bigint) * interval '1 millisecond')`;
const TIED_ORDINAL = `(n - (n % 10 = 9)::int)`;

interface Spread {
  readonly start: string;
  readonly stepMs: number;
}

const spreadOver = (total: number, end: number): Spread => ({
  start: new Date(end - SPAN_MS).toISOString(),
  stepMs: Math.max(1, Math.floor(SPAN_MS / Math.max(total, 1))),
});

const CLIENTS_SQL = `
  insert into clients (organization_id, name, email, phone, company, created_at)
  select ?, r.first || ' ' || r.last,
    case when r.u < 0.9 then lower(replace(r.first || '.' || r.last, ' ', '')) || r.n || '@' || ${pick(textArray(EMAIL_DOMAINS), EMAIL_DOMAINS.length)} end,
    case when r.u < 0.8 then '+44 7' || lpad(floor(random() * 1000)::int::text, 3, '0') || ' ' || lpad(floor(random() * 1000000)::int::text, 6, '0') end,
    case when r.u < 0.45 then ${pick(textArray(COMPANIES), COMPANIES.length)} end,
    r.created_at
  from (
    select n, ${CREATED_AT} as created_at, random() as u,
      ${pick(textArray(FIRST_NAMES), FIRST_NAMES.length)} as first, ${pick(textArray(LAST_NAMES), LAST_NAMES.length)} as last
    from generate_series(?::bigint, ?::bigint) n, lateral (select ${TIED_ORDINAL} as p) t
    offset 0
  ) r`;

const EVENT_TYPE_LIST = textArray(EVENT_TYPES);
const EVENT_LABEL_LIST = textArray(EVENT_TYPES.map((type) => EVENT_LABELS[type]));

/** Events are booked one week to eighteen months ahead of their creation. */
const EVENT_DATE = "(r.created_at + r.lead_days * interval '1 day')::date";

const EVENTS_SQL = `
  with seed_clients as materialized (
    select array_agg(id) as ids
    from (select id from clients where organization_id = ? and id > ? order by id desc limit ${LINK_POOL}) c
  )
  insert into events (organization_id, client_id, name, event_date, guests, price_per_head_minor, event_type, status, created_at)
  select ?,
    case when random() < 0.75 then c.ids[1 + floor(random() * cardinality(c.ids))::int] end,
    r.last || ' ' || case when r.typed then (${EVENT_LABEL_LIST})[r.type_index] else 'Event' end,
    case when r.dated then ${EVENT_DATE} end,
    case when random() < 0.97 then 8 + floor(power(random(), 2) * 492)::int end,
    case when random() < 0.95 then 2500 + floor(random() * 300)::int * 50 end,
    case when r.typed then (${EVENT_TYPE_LIST})[r.type_index] end,
    case
      when r.dated and ${EVENT_DATE} < current_date then case when r.u < 0.88 then ${eventStatus("completed")} else ${eventStatus("cancelled")} end
      when r.u < 0.05 then ${eventStatus("cancelled")}
      else ${pick(textArray(UPCOMING_STATUSES), UPCOMING_STATUSES.length)}
    end,
    r.created_at
  from (
    select n, ${CREATED_AT} as created_at, random() as u, random() < 0.98 as dated, random() < 0.96 as typed,
      1 + floor(random() * ${EVENT_TYPES.length})::int as type_index,
      7 + floor(random() * 540)::int as lead_days,
      ${pick(textArray(LAST_NAMES), LAST_NAMES.length)} as last
    from generate_series(?::bigint, ?::bigint) n, lateral (select ${TIED_ORDINAL} as p) t
    offset 0
  ) r, seed_clients c`;

/**
 * One statement per invoice chunk: the invoices, then their 1–5 line items joined back by the
 * (unique) number. Paid invoices are paid in full, computed with the domain's rounding (net per
 * line half away from zero, then tax per line).
 */
const INVOICES_SQL = `
  with seed_events as materialized (
    select array_agg(id) as ids
    from (select id from events where organization_id = ? and id > ? order by id desc limit ${LINK_POOL}) e
  ), seed_clients as materialized (
    select array_agg(id) as ids
    from (select id from clients where organization_id = ? and id > ? order by id desc limit ${LINK_POOL}) c
  ), src as materialized (
    select r.*, coalesce(ev.client_id, r.client_pick) as client_id,
      case
        when r.created_at > now() - interval '14 days' then
          case when r.u < 0.6 then ${invoiceStatus("draft")} else ${invoiceStatus("sent")} end
        when r.u < 0.85 then ${invoiceStatus("paid")} when r.u < 0.95 then ${invoiceStatus("sent")} else ${invoiceStatus("void")}
      end as status
    from (
      select n, 'INV-' || ?::text || '-' || lpad((n + 1)::text, greatest(7, length((n + 1)::text)), '0') as number, ${CREATED_AT} as created_at, random() as u,
        case when random() < 0.8 then e.ids[1 + floor(random() * cardinality(e.ids))::int] end as event_id,
        case when random() < 0.9 then c.ids[1 + floor(random() * cardinality(c.ids))::int] end as client_pick,
        1 + floor(random() * 5)::int as line_count, (array[14, 30])[1 + floor(random() * 2)::int] as terms_days
      from generate_series(?::bigint, ?::bigint) n, lateral (select ${TIED_ORDINAL} as p) t, seed_events e, seed_clients c
    ) r
    left join events ev on ev.id = r.event_id
  ), lines as materialized (
    select s.n, g.position, ${pick(textArray(LINE_DESCRIPTIONS), LINE_DESCRIPTIONS.length)} as description,
      case when random() < 0.2 then (1 + floor(random() * 16)::int) * 500 else (1 + floor(random() * 200)::int) * 1000 end
        as quantity_milli,
      (5 + floor(random() * 400)::int) * 25 as unit_price_minor,
      ${pick(intArray(TAX_RATES_BASIS_POINTS), TAX_RATES_BASIS_POINTS.length)} as tax_rate_basis_points
    from src s, generate_series(1, s.line_count) g(position)
  ), totals as (
    select n, sum(net + round(net * tax_rate_basis_points / 10000.0))::bigint as total
    from (select n, round(quantity_milli::numeric * unit_price_minor / 1000) as net, tax_rate_basis_points from lines) l
    group by n
  ), inserted as (
    insert into invoices (organization_id, client_id, event_id, number, status, currency, issue_date, due_date,
      amount_paid_minor, created_at)
    select ?, s.client_id, s.event_id, s.number, s.status, o.currency, s.created_at::date,
      s.created_at::date + s.terms_days, case when s.status = ${invoiceStatus("paid")} then t.total else 0 end, s.created_at
    from src s join totals t on t.n = s.n, organizations o
    where o.id = ?
    order by s.n
    returning id, number
  )
  insert into invoice_line_items (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor,
    tax_rate_basis_points)
  select ?, i.id, l.position, l.description, l.quantity_milli, l.unit_price_minor, l.tax_rate_basis_points
  from inserted i join src s on s.number = i.number join lines l on l.n = s.n
  order by i.id, l.position`;

const run = (orm: MikroORM, sql: string, params: readonly unknown[]) => orm.em.getConnection().execute(sql, [...params]);

const highestId = async (orm: MikroORM, table: "clients" | "events"): Promise<number> => {
  const [row] = await orm.em.getConnection().execute<{ id: string }[]>(`select coalesce(max(id), 0) as id from ${table}`);
  return Number(row?.id ?? 0);
};

/** A prefix for invoice numbers that no invoice of the organization uses yet. */
const freshInvoiceBatch = async (orm: MikroORM, organizationId: number): Promise<string> => {
  for (;;) {
    const batch = randomBytes(4).toString("hex").toUpperCase();
    const [row] = await orm.em.getConnection().execute<{ taken: boolean }[]>(
      "select exists (select 1 from invoices where organization_id = ? and starts_with(number, ?)) as taken",
      [organizationId, `INV-${batch}-`],
    );
    if (!row?.taken) return batch;
  }
};

const inChunks = async (
  label: string,
  total: number,
  chunkRows: number,
  insert: (first: number, last: number) => Promise<unknown>,
  onProgress: SeedProgress | undefined,
): Promise<void> => {
  for (let done = 0; done < total; ) {
    const rows = Math.min(chunkRows, total - done);
    await insert(done, done + rows - 1);
    done += rows;
    onProgress?.(label, done, total);
  }
};

const checkOptions = (options: BulkSeedOptions): void => {
  for (const key of ["events", "clients", "invoices"] as const) {
    const value = options[key];
    if (!Number.isSafeInteger(value) || value < 0) throw new InvalidInput({ message: `${key} must be a whole number ≥ 0` });
  }
};

/**
 * Seeds `clients`, then `events` (most linked to this seed's clients), then `invoices` with 1–5
 * line items each (most linked to this seed's events), all in the scope's organization (every
 * statement binds it), and refreshes the
 * planner statistics of the tables it touched. Seeding the same organization again adds more.
 * Rejects with `InvalidInput` for a negative or fractional count, before writing anything.
 */
export const seedBulk = async (orm: MikroORM, scope: OrgScope, options: BulkSeedOptions, onProgress?: SeedProgress): Promise<void> => {
  checkOptions(options);
  const org = scope.organizationId;
  const end = Date.now();
  const clientsAbove = await highestId(orm, "clients");
  const eventsAbove = await highestId(orm, "events");

  const clients = spreadOver(options.clients, end);
  await inChunks("clients", options.clients, CHUNK_ROWS.clients, (first, last) =>
    run(orm, CLIENTS_SQL, [org, clients.start, clients.stepMs, clients.stepMs, first, last]), onProgress);

  const events = spreadOver(options.events, end);
  await inChunks("events", options.events, CHUNK_ROWS.events, (first, last) =>
    run(orm, EVENTS_SQL, [
      org, clientsAbove, org,
      events.start, events.stepMs, events.stepMs, first, last,
    ]), onProgress);

  if (options.invoices > 0) {
    const batch = await freshInvoiceBatch(orm, org);
    const invoices = spreadOver(options.invoices, end);
    await inChunks("invoices", options.invoices, CHUNK_ROWS.invoices, (first, last) =>
      run(orm, INVOICES_SQL, [
        org, eventsAbove, org, clientsAbove,
        batch, invoices.start, invoices.stepMs, invoices.stepMs, first, last,
        org, org, org,
      ]), onProgress);
  }

  await run(orm, "analyze clients, events, invoices, invoice_line_items", []);
};
