import { randomBytes } from "node:crypto";
import type { MikroORM } from "@mikro-orm/postgresql";
import { EVENT_TYPES, type EventStatus, InvalidInput, type InvoiceStatus, type OrgScope } from "@platter/domain";
import type pg from "pg";

/**
 * Bulk seeding: large, realistic-looking data for one organization, fast. Every chunk is one
 * set-based `insert … select … from generate_series(…)` statement, so PostgreSQL generates the
 * rows itself and nothing crosses the wire but the statement.
 *
 * Each chunk is its own transaction: progress is visible to other sessions as it happens, no
 * transaction grows with the seed size, and an interrupted seed leaves whole chunks behind (every
 * invoice arrives together with its line items).
 *
 * `created_at` is spread over the past three years, increasing with insertion order like real data
 * (ids and timestamps agree), with every tenth row sharing its predecessor's timestamp so that
 * lists must break ties by id.
 *
 * Clients and events, the large tables, spend most of their time in foreign-key triggers: one
 * call per row and reference, about 60 % of an event's insert. Where the connection may set
 * `session_replication_role` and the two tables have exactly the foreign keys their statements
 * check and no trigger or rule of their own (`referenceChecks`), a chunk's transaction runs as
 * `replica`, which skips those triggers, and its statement does their work once for the chunk: it
 * locks the organization and the clients it links to `for key share`, as the triggers would, and
 * takes their ids from the locked rows, so whatever it references exists and stays until it
 * commits. Such chunks are written two at a time on two connections, each taking its ids from the
 * table's sequence once the chunk before it has taken its own, so ids still rise with
 * `created_at`. Elsewhere the triggers run, one chunk at a time. Events link to clients created
 * around the same time (their chunk's share of the seed's clients), which keeps those locks few.
 */

/** How many rows of each kind one bulk seed adds. */
export interface BulkSeedOptions {
  readonly events: number;
  readonly clients: number;
  readonly invoices: number;
}

/** Called after each chunk: rows of `label` written so far, of `total`. */
export type SeedProgress = (label: string, done: number, total: number) => void;

const CHUNK_ROWS = { clients: 50_000, events: 50_000, invoices: 20_000 } as const;
/** Chunks of clients or events written at once when their references are checked by statement. */
const PARALLEL_CHUNKS = 2;
const SPAN_MS = 3 * 365 * 24 * 60 * 60 * 1000;
/** Invoices link to at most this many of the seed's newest clients/events: bounded memory. */
const LINK_POOL = 100_000;
/** An events chunk links to at most this many clients (each locked for the chunk's transaction). */
const CLIENTS_PER_EVENTS_CHUNK = 20_000;

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
 * Parameters: start (ms since the epoch), step ms, step ms.
 */
const CREATED_AT = `to_timestamp((?::bigint + p * ?::bigint + (hashint8(p)::bigint & 2147483647) % ?::bigint) / 1000::float8)`;
const TIED_ORDINAL = `(n - (n % 10 = 9)::int)`;

interface Spread {
  readonly startMs: number;
  readonly stepMs: number;
}

const spreadOver = (total: number, end: number): Spread => ({
  startMs: end - SPAN_MS,
  stepMs: Math.max(1, Math.floor(SPAN_MS / Math.max(total, 1))),
});

/**
 * The id of the row at ordinal `n`: the chunk's first reserved id plus its offset, or its entry in
 * the reserved list when another session's insert took ids in between. Parameters: list, first
 * ordinal, first id, first ordinal.
 */
const RESERVED_ID = "coalesce((?::bigint[])[n - ?::bigint + 1], ?::bigint + (n - ?::bigint))";

/** The organization, locked as a foreign-key check would lock it. Parameter: its id. */
const LOCKED_ORGANIZATION = "(select id from organizations where id = ? for key share) o";

const CLIENTS_SQL = `
  insert into clients (id, organization_id, name, email, phone, company, created_at)
  select r.id, o.id, r.first || ' ' || r.last,
    case when r.u < 0.9 then lower(replace(r.first || '.' || r.last, ' ', '')) || r.n || '@' || ${pick(textArray(EMAIL_DOMAINS), EMAIL_DOMAINS.length)} end,
    case when r.u < 0.8 then '+44 7' || lpad(floor(random() * 1000)::int::text, 3, '0') || ' ' || lpad(floor(random() * 1000000)::int::text, 6, '0') end,
    case when r.u < 0.45 then ${pick(textArray(COMPANIES), COMPANIES.length)} end,
    r.created_at
  from (
    select n, ${RESERVED_ID} as id, ${CREATED_AT} as created_at, random() as u,
      ${pick(textArray(FIRST_NAMES), FIRST_NAMES.length)} as first, ${pick(textArray(LAST_NAMES), LAST_NAMES.length)} as last
    from generate_series(?::bigint, ?::bigint) n, lateral (select ${TIED_ORDINAL} as p) t
    offset 0
  ) r, ${LOCKED_ORGANIZATION}`;

const EVENT_TYPE_LIST = textArray(EVENT_TYPES);
const EVENT_LABEL_LIST = textArray(EVENT_TYPES.map((type) => EVENT_LABELS[type]));

const EVENTS_SQL = `
  with seed_clients as materialized (
    select coalesce(array_agg(id), '{}') as ids
    from (select id from clients where organization_id = ? and id between ? and ? for key share) c
  )
  insert into events (id, organization_id, client_id, name, event_date, guests, price_per_head_minor, event_type, status, created_at)
  select r.id, o.id,
    case when random() < 0.75 then c.ids[1 + floor(random() * cardinality(c.ids))::int] end,
    r.last || ' ' || case when r.typed then (${EVENT_LABEL_LIST})[r.type_index] else 'Event' end,
    case when r.dated then r.event_date end,
    case when random() < 0.97 then 8 + floor(power(random(), 2) * 492)::int end,
    case when random() < 0.95 then 2500 + floor(random() * 300)::int * 50 end,
    case when r.typed then (${EVENT_TYPE_LIST})[r.type_index] end,
    case
      when r.dated and r.event_date < current_date then case when r.u < 0.88 then ${eventStatus("completed")} else ${eventStatus("cancelled")} end
      when r.u < 0.05 then ${eventStatus("cancelled")}
      else ${pick(textArray(UPCOMING_STATUSES), UPCOMING_STATUSES.length)}
    end,
    r.created_at
  from (
    select n, ${RESERVED_ID} as id, s.created_at, random() as u, random() < 0.98 as dated, random() < 0.96 as typed,
      -- Booked one week to eighteen months ahead of its creation.
      s.created_at::date + (7 + floor(random() * 540)::int) as event_date,
      1 + floor(random() * ${EVENT_TYPES.length})::int as type_index,
      ${pick(textArray(LAST_NAMES), LAST_NAMES.length)} as last
    from generate_series(?::bigint, ?::bigint) n, lateral (select ${TIED_ORDINAL} as p) t, lateral (select ${CREATED_AT} as created_at) s
    offset 0
  ) r, ${LOCKED_ORGANIZATION}, seed_clients c`;

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

/**
 * How a chunk of clients or events has its references checked: by its own statement, once per
 * chunk, with the per-row foreign-key triggers skipped (`replica`); or by those triggers.
 */
type ReferenceChecks = "by statement" | "by triggers";

/** The foreign keys of clients and events, each of which the statements check themselves. */
const CHECKED_FOREIGN_KEYS = [
  "clients FOREIGN KEY (organization_id) REFERENCES organizations(id)",
  "events FOREIGN KEY (client_id) REFERENCES clients(id)",
  "events FOREIGN KEY (organization_id) REFERENCES organizations(id)",
];

/**
 * "by statement" where the connection may set `session_replication_role` and clients and events
 * have exactly `CHECKED_FOREIGN_KEYS` and no trigger or rule of their own (which `replica` would
 * skip as well); "by triggers" anywhere else.
 */
const referenceChecks = async (orm: MikroORM): Promise<ReferenceChecks> => {
  const connection = orm.em.getConnection();
  const [role] = await connection.execute<{ superuser: boolean; version: number }[]>(
    "select current_setting('is_superuser') = 'on' as superuser, current_setting('server_version_num')::int as version",
  );
  let mayReplicate = role?.superuser === true;
  if (!mayReplicate && (role?.version ?? 0) >= 150_000) {
    const [grant] = await connection.execute<{ granted: boolean }[]>(
      "select has_parameter_privilege('session_replication_role', 'SET') as granted",
    );
    mayReplicate = grant?.granted === true;
  }
  if (!mayReplicate) return "by triggers";
  const [schema] = await connection.execute<{ keys: string[]; others: string }[]>(
    `select array(
       select conrelid::regclass::text || ' ' || pg_get_constraintdef(oid) from pg_constraint
       where contype = 'f' and conrelid in ('clients'::regclass, 'events'::regclass)
     ) as keys,
     (select count(*) from pg_trigger where tgrelid in ('clients'::regclass, 'events'::regclass) and not tgisinternal)
       + (select count(*) from pg_rewrite where ev_class in ('clients'::regclass, 'events'::regclass)) as others`,
  );
  const keys = [...(schema?.keys ?? [])].sort();
  const expected = Number(schema?.others) === 0 && JSON.stringify(keys) === JSON.stringify(CHECKED_FOREIGN_KEYS);
  return expected ? "by statement" : "by triggers";
};

/** Runs `body` in a transaction of its own on a connection of the pool. */
const inTransaction = async <A>(pool: pg.Pool, checks: ReferenceChecks, body: (client: pg.PoolClient) => Promise<A>): Promise<A> => {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(checks === "by statement" ? "begin; set local session_replication_role = replica" : "begin");
    const result = await body(client);
    await client.query("commit");
    return result;
  } catch (error) {
    broken = await client.query("rollback").then(() => false, () => true);
    throw error;
  } finally {
    client.release(broken);
  }
};

/** Ids taken from a table's sequence for one chunk: the first, and the whole list if they are not consecutive. */
interface ReservedIds {
  readonly first: number;
  readonly list: string | null;
}

const reserveIds = async (client: pg.PoolClient, table: "clients" | "events", count: number): Promise<ReservedIds> => {
  const { rows } = await client.query<{ first: string; list: string[] | null }>(
    `with sequence as materialized (select pg_get_serial_sequence($1, 'id')::regclass as id),
     taken as materialized (select nextval(sequence.id) as id from sequence, generate_series(1, $2::int))
     select min(id) as first,
       case when max(id) - min(id) + 1 <> $2::int then (select array_agg(id order by id) from taken) end as list
     from taken`,
    [table, count],
  );
  const { first, list } = rows[0]!;
  return { first: Number(first), list: list === null ? null : `{${list.join(",")}}` };
};

/** One chunk of clients or events: its ordinals and its reserved ids. */
interface Chunk {
  readonly first: number;
  readonly last: number;
  readonly ids: ReservedIds;
}

/**
 * Writes `total` rows of `table`, a chunk per transaction, two chunks at once when checked "by
 * statement" (else one). Each chunk reserves its ids once the chunk before it has reserved its
 * own, so ids rise with the ordinals across chunks. After a failure no new chunk starts, and the
 * first error is thrown once the chunks under way have ended. `insert` answers the rows it wrote.
 */
const writeChunks = async (
  pool: pg.Pool,
  checks: ReferenceChecks,
  table: "clients" | "events",
  total: number,
  insert: (client: pg.PoolClient, chunk: Chunk) => Promise<number>,
  onProgress: SeedProgress | undefined,
): Promise<void> => {
  let next = 0;
  let done = 0;
  let failure: { readonly error: unknown } | undefined;
  let previousReserved = Promise.resolve();
  const worker = async () => {
    while (next < total && failure === undefined) {
      const first = next;
      const last = Math.min(total, first + CHUNK_ROWS[table]) - 1;
      next = last + 1;
      const turn = previousReserved;
      let reserved!: () => void;
      previousReserved = new Promise((resolve) => (reserved = resolve));
      try {
        await inTransaction(pool, checks, async (client) => {
          await turn;
          const ids = await reserveIds(client, table, last - first + 1);
          reserved();
          const written = await insert(client, { first, last, ids });
          // Only "by statement": the organization was gone, so its join gave no rows.
          if (written !== last - first + 1) throw new Error(`${table}: wrote ${written} rows of ${last - first + 1}`);
        });
        done += last - first + 1;
        onProgress?.(table, done, total);
      } catch (error) {
        failure ??= { error };
      } finally {
        reserved();
      }
    }
  };
  await Promise.all(Array.from({ length: checks === "by statement" ? PARALLEL_CHUNKS : 1 }, worker));
  if (failure !== undefined) throw failure.error;
};

/** Rows written by `sql` (with `?` placeholders, numbered here) on `client`. */
const rowsWritten = async (client: pg.PoolClient, sql: string, params: readonly unknown[]): Promise<number> => {
  let position = 0;
  const result = await client.query(sql.replace(/\?/g, () => `$${++position}`), [...params]);
  return result.rowCount ?? 0;
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
  const pool = await orm.em.getConnection().getNativeClient();
  const checks = await referenceChecks(orm);

  const clients = spreadOver(options.clients, end);
  await writeChunks(pool, checks, "clients", options.clients, (client, chunk) =>
    rowsWritten(client, CLIENTS_SQL, [
      chunk.ids.list, chunk.first, chunk.ids.first, chunk.first,
      clients.startMs, clients.stepMs, clients.stepMs, chunk.first, chunk.last, org,
    ]), onProgress);

  // Each events chunk links to its share of this seed's clients, in id (so creation) order.
  const [range] = await orm.em.getConnection().execute<{ low: string | null; high: string | null }[]>(
    "select min(id) as low, max(id) as high from clients where organization_id = ? and id > ?",
    [org, clientsAbove],
  );
  const low = Number(range?.low ?? 0);
  const span = range?.high == null ? 0 : Number(range.high) - low + 1;
  const events = spreadOver(options.events, end);
  await writeChunks(pool, checks, "events", options.events, (client, chunk) => {
    const from = low + Math.floor((chunk.first * span) / options.events);
    const to = Math.min(low + Math.ceil(((chunk.last + 1) * span) / options.events) - 1, from + CLIENTS_PER_EVENTS_CHUNK - 1);
    return rowsWritten(client, EVENTS_SQL, [
      org, from, to,
      chunk.ids.list, chunk.first, chunk.ids.first, chunk.first,
      chunk.first, chunk.last, events.startMs, events.stepMs, events.stepMs, org,
    ]);
  }, onProgress);

  if (options.invoices > 0) {
    const batch = await freshInvoiceBatch(orm, org);
    const invoices = spreadOver(options.invoices, end);
    await inChunks("invoices", options.invoices, CHUNK_ROWS.invoices, (first, last) =>
      run(orm, INVOICES_SQL, [
        org, eventsAbove, org, clientsAbove,
        batch, invoices.startMs, invoices.stepMs, invoices.stepMs, first, last,
        org, org, org,
      ]), onProgress);
  }

  await run(orm, "analyze clients, events, invoices, invoice_line_items", []);
};
