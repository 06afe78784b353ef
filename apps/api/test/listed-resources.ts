import type { ApiUnderTest } from "./api-harness.ts";

/**
 * The four list endpoints described once, so pagination, cursor and isolation tests run the same
 * table over all of them: how to insert rows in bulk with SQL, how to delete them, and the order
 * the spec requires.
 */

type Sql = ApiUnderTest["sql"];

export interface ListedResource {
  readonly name: "events" | "recipes" | "clients" | "invoices";
  readonly path: string;
  readonly order: "newest first" | "by name, ties by id";
  /** Whether row `a` must be listed before row `b`. */
  readonly precedes: (a: any, b: any) => boolean;
  /**
   * Inserts one row per sort-key number (equal numbers give equal `created_at` or equal names,
   * i.e. ties) for the organization; returns the new ids.
   */
  readonly insert: (sql: Sql, organizationId: number, keys: ReadonlyArray<number>) => Promise<number[]>;
  readonly remove: (sql: Sql, ids: ReadonlyArray<number>) => Promise<void>;
}

const BASE_TIME = Date.parse("2026-03-01T09:00:00.000Z");

/** A `created_at` per key number: one key is 1.5 s, so milliseconds matter too. */
const timestampOf = (key: number): string => new Date(BASE_TIME + key * 1_500).toISOString();

/** Names that sort differently in byte order than in a locale (case, accents, digits, astral characters). */
const NAME_STEMS = ["Apple", "apple", "Éclair", "éclair", "Zucchini", "zucchini", "Ｆullwidth", "𝄞 Music", "10 Layer", "9 Grain"];
const nameOf = (key: number): string => `${NAME_STEMS[key % NAME_STEMS.length]} ${String(Math.floor(key / NAME_STEMS.length)).padStart(3, "0")}`;

const utf8Compare = (a: string, b: string): number => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

const newestFirst = (a: any, b: any): boolean => a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id);
const byName = (a: any, b: any): boolean => {
  const names = utf8Compare(a.name, b.name);
  return names < 0 || (names === 0 && a.id < b.id);
};

const json = (values: ReadonlyArray<unknown>): string => JSON.stringify(values);

/** Inserts from a JSON array of key values: `k.value` is the key's text, `k.ord` its position. */
const insertRows = async (sql: Sql, statement: string, organizationId: number, values: ReadonlyArray<string>): Promise<number[]> => {
  if (values.length === 0) return [];
  const rows = await sql<{ id: string }>(statement, [organizationId, json(values)]);
  return rows.map((row) => Number(row.id));
};

const KEYS = "json_array_elements_text(?::json) with ordinality as k(value, ord)";

const deleteFrom = (table: string) => async (sql: Sql, ids: ReadonlyArray<number>) => {
  if (ids.length === 0) return;
  await sql(`delete from ${table} where id in (select value::bigint from json_array_elements_text(?::json))`, [json(ids)]);
};

export const LISTED_RESOURCES: ReadonlyArray<ListedResource> = [
  {
    name: "events",
    path: "/v1/events",
    order: "newest first",
    precedes: newestFirst,
    insert: (sql, organizationId, keys) =>
      insertRows(
        sql,
        `insert into events (organization_id, name, created_at)
         select ?, 'Seeded event ' || k.ord, k.value::timestamptz from ${KEYS} returning id`,
        organizationId,
        keys.map(timestampOf),
      ),
    remove: deleteFrom("events"),
  },
  {
    name: "recipes",
    path: "/v1/recipes",
    order: "by name, ties by id",
    precedes: byName,
    insert: (sql, organizationId, keys) =>
      insertRows(
        sql,
        `insert into recipes (organization_id, name, servings) select ?, k.value, 4 from ${KEYS} returning id`,
        organizationId,
        keys.map(nameOf),
      ),
    remove: deleteFrom("recipes"),
  },
  {
    name: "clients",
    path: "/v1/clients",
    order: "by name, ties by id",
    precedes: byName,
    insert: (sql, organizationId, keys) =>
      insertRows(
        sql,
        `insert into clients (organization_id, name) select ?, k.value from ${KEYS} returning id`,
        organizationId,
        keys.map(nameOf),
      ),
    remove: deleteFrom("clients"),
  },
  {
    name: "invoices",
    path: "/v1/invoices",
    order: "newest first",
    precedes: newestFirst,
    insert: (sql, organizationId, keys) =>
      insertRows(
        sql,
        `insert into invoices (organization_id, number, currency, issue_date, due_date, created_at)
         select ?, 'INV-' || gen_random_uuid(), 'EUR', date '2026-03-01', date '2026-03-31', k.value::timestamptz
         from ${KEYS} returning id`,
        organizationId,
        keys.map(timestampOf),
      ),
    remove: deleteFrom("invoices"),
  },
];

/** `count` key numbers in groups of three equal ones: every sort key value is shared by three rows. */
export const tiedKeys = (count: number, from = 0): number[] => Array.from({ length: count }, (_, i) => from + Math.floor(i / 3));

/** A small deterministic random source (mulberry32), so a failing walk can be replayed. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

/** `count` key numbers drawn from `0..range-1`: rows land anywhere in the order, often tied. */
export const randomKeys = (random: () => number, count: number, range: number): number[] =>
  Array.from({ length: count }, () => Math.floor(random() * range));
