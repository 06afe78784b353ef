import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@platter/testing";

/**
 * Every table an organization can grow has a bound. Read from the migrated database's catalog, each
 * table is classified here: capped per organization (by the named setting), removed by a retention
 * sweep (after the named setting), or bounded for a stated reason. A new table without a
 * classification fails this test: whoever adds it says how it stays bounded.
 */

/** How a table stays bounded. */
type Bound =
  | { readonly capped: string }
  | { readonly retention: string; readonly sweptBy: ReadonlyArray<string> }
  | { readonly bounded: string };

/** The business records an organization keeps through the API: its own data, for as long as it has them. */
const BUSINESS_RECORD: Bound = {
  bounded: "the organization's own business records, kept as long as it keeps them; written only through the API, at most RATE_LIMIT_CREATES per second per organization",
};

const HOUSEKEEPING = "src/housekeeping.ts";
/** History's time partitions, dropped whole (`WEBHOOK_HISTORY`'s and `REQUEST_HISTORY`'s tables). */
const PARTITIONS = "src/history-partitions.ts";

/** Every table of the migrated database, and how it is bounded. */
const TABLE_BOUNDS: Readonly<Record<string, Bound>> = {
  mikro_orm_migrations: { bounded: "one row per migration shipped" },
  organizations: { bounded: "made only by the operator (`platter org create`), plus at most one sandbox per organization" },
  process_instances: { bounded: "one row per running process, removed when it leaves or its heartbeat expires" },
  history_id_marks: { bounded: "one row per partition of the history tables found by id (two), removed with its partition when retention drops it" },
  secret_key_checks: { bounded: "one row per key id the operator gave SECRET_ENCRYPTION_KEYS; no organization writes it" },
  // Working keys are capped (API_KEYS_PER_ORGANIZATION); ended ones are removed 30 days after they ended.
  api_keys: { retention: "30 days after a key ended (working keys capped by API_KEYS_PER_ORGANIZATION); one the audit log names, after AUDIT_LOG_RETENTION", sweptBy: [HOUSEKEEPING] },
  // Live endpoints are capped; a deleted one (freed from the cap) goes once retention took its last delivery and notice;
  // a local listener is one per key: its row goes with its ended key once nothing of it is left.
  webhook_endpoints: {
    retention: "WEBHOOK_RETENTION for a deleted endpoint's history, then its row (live ones capped by WEBHOOK_ENDPOINTS_PER_ORGANIZATION; one local listener per API key, removed with its ended key)",
    sweptBy: [HOUSEKEEPING],
  },
  // Time partitions of WEBHOOK_HISTORY_PARTITION, dropped whole once past the retention (pending deliveries settled first).
  webhook_messages: { retention: "WEBHOOK_RETENTION", sweptBy: [PARTITIONS] },
  webhook_deliveries: { retention: "WEBHOOK_RETENTION (pending ones are settled 'history expired' before their partition goes)", sweptBy: [PARTITIONS] },
  webhook_attempts: { retention: "WEBHOOK_RETENTION", sweptBy: [PARTITIONS] },
  endpoint_notices: { retention: "WEBHOOK_RETENTION", sweptBy: [HOUSEKEEPING] },
  // Confirmed or not, an organization's addresses count against its cap; an unconfirmed one is removed by hand or replaced.
  alert_recipients: { capped: "ALERT_RECIPIENTS_PER_ORGANIZATION (confirmed or waiting for confirmation)" },
  alert_mails: {
    bounded: "one row per endpoint notice and confirmed address (at most ALERT_RECIPIENTS_PER_ORGANIZATION per notice), removed with its notice (on delete cascade) when the notice sweep removes it after WEBHOOK_RETENTION, and with its address",
  },
  audit_log: { retention: "AUDIT_LOG_RETENTION", sweptBy: [HOUSEKEEPING] },
  developer_sessions: { retention: "a day after it expires; one the audit log names, after AUDIT_LOG_RETENTION", sweptBy: [HOUSEKEEPING] },
  developer_sign_in_links: { retention: "a day after it expires; one a kept session or the audit log names, after those", sweptBy: [HOUSEKEEPING] },
  idempotency_keys: { retention: "IDEMPOTENCY_WINDOW_HOURS (24 h)", sweptBy: [HOUSEKEEPING] },
  // Time partitions of REQUEST_HISTORY_PARTITION, dropped whole once past the retention.
  api_requests: { retention: "REQUEST_HISTORY_RETENTION", sweptBy: [PARTITIONS] },
  clients: BUSINESS_RECORD,
  recipes: BUSINESS_RECORD,
  ingredients: BUSINESS_RECORD,
  events: BUSINESS_RECORD,
  dishes: BUSINESS_RECORD,
  proposals: BUSINESS_RECORD,
  invoices: BUSINESS_RECORD,
  invoice_line_items: BUSINESS_RECORD,
};

const ENTRIES = Object.entries(TABLE_BOUNDS);
const CAPPED = ENTRIES.flatMap(([table, bound]) => ("capped" in bound ? [[table, bound.capped] as const] : []));
const SWEPT = ENTRIES.flatMap(([table, bound]) => ("retention" in bound ? [[table, bound.retention, bound.sweptBy] as const] : []));
const BOUNDED = ENTRIES.flatMap(([table, bound]) => ("bounded" in bound ? [[table, bound.bounded] as const] : []));

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

describe("every table has a bound", () => {
  it("classifies every table of the migrated database, and only those", async () => {
    const tables = await db.orm.em.getConnection().execute<{ table_name: string }[]>(
      // A partitioned table once, not each of its partitions.
      `select c.relname as table_name from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p')
         and not c.relispartition order by c.relname`,
    );
    expect(tables.map((row) => row.table_name)).toEqual(Object.keys(TABLE_BOUNDS).sort());
  });

  it.each(CAPPED)("%s is capped per organization by %s", (_table, setting) => {
    expect(setting).toMatch(/^[A-Z][A-Z_]+[A-Z]\b/);
  });

  it.each(SWEPT)("%s is removed by a retention sweep (%s) that deletes from it", (table, _retention, sweptBy) => {
    const sweeps = sweptBy.map((file) => readFileSync(new URL(`../${file}`, import.meta.url), "utf8")).join("\n");
    // Either statement form the sweeps use: a delete naming the table, or the table handed to `removeOldest` (or to a partition family).
    expect(sweeps).toMatch(new RegExp(`delete from ${table}\\b|"${table}"`));
  });

  it.each(BOUNDED)("%s is bounded: %s", (_table, reason) => {
    expect(reason.length).toBeGreaterThan(10);
  });
});
