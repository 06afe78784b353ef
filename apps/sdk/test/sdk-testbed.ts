import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiApp, createApiObservability } from "@platter/api";
import { createLogger, KeyRateLimits, UNTHROTTLED } from "@platter/ops";
import {
  createOrganization, createTestDatabase, freePort, type OrganizationFixture, type TestDatabase,
} from "@platter/testing";
import { inject } from "vitest";
import { Platter, type PlatterOptions } from "../src/index.ts";

/**
 * The SDK under test against the real API: `createApiApp` served over HTTP on 127.0.0.1 on a fresh
 * database of its own (as apps/api/test/api-harness.ts does), with an organization and its keys,
 * and SQL to seed records.
 */

/** Runs SQL on the test database (`?` placeholders). */
export type Sql = <Row = Record<string, unknown>>(statement: string, params?: ReadonlyArray<unknown>) => Promise<Row[]>;

export interface SdkTestbed {
  /** The API's base URL as an integrator configures it: `http://127.0.0.1:…/v1`. */
  readonly baseUrl: string;
  /** The test database (for setting up webhook endpoints and starting a dispatcher on it). */
  readonly db: TestDatabase;
  readonly org: OrganizationFixture;
  readonly sql: Sql;
  readonly newOrganization: (name?: string, currency?: string) => Promise<OrganizationFixture>;
  /** A client with the organization's read/write key; `options` override any setting. */
  readonly platter: (options?: Partial<PlatterOptions>) => Platter;
  readonly close: () => Promise<void>;
}

/** Starts the API on a fresh database and creates one organization. */
export const startSdkTestbed = async (): Promise<SdkTestbed> => {
  const db = await createTestDatabase(inject("pgAdminUrl"));
  const server: Server = createHttpServer(createApiApp(db.runtime, createLogger("api", "silent"), new KeyRateLimits(UNTHROTTLED),
    createApiObservability(db.runtime, createLogger("api", "silent"), false)).callback());
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const org = await createOrganization(db, "SDK Catering", "EUR");
  return {
    baseUrl,
    db,
    org,
    sql: (statement, params = []) => db.orm.em.getConnection().execute(statement, [...params]),
    newOrganization: (name, currency) => createOrganization(db, name, currency),
    platter: (options = {}) => new Platter({ apiKey: org.writeKey, baseUrl, ...options }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await db.dispose();
    },
  };
};

const idOf = (rows: ReadonlyArray<{ id: string | number }>): number => Number(rows[0]!.id);

/** A recipe with two ingredients, an event with a dish of it, and an invoice with two line items. */
export const seedRecordsWithChildren = async (sql: Sql, organizationId: number) => {
  const recipeId = idOf(
    await sql<{ id: string }>(
      `insert into recipes (organization_id, name, servings, allergens, vegetarian) values (?, 'Lemon tart', 8, '{eggs,milk,gluten}', true) returning id`,
      [organizationId],
    ),
  );
  await sql(
    `insert into ingredients (organization_id, recipe_id, position, name, quantity, unit)
     values (?, ?, 1, 'Lemons', 4, 'piece'), (?, ?, 2, 'Butter', 125, 'g')`,
    [organizationId, recipeId, organizationId, recipeId],
  );
  const clientId = idOf(await sql<{ id: string }>(`insert into clients (organization_id, name) values (?, 'Ada Lovelace') returning id`, [organizationId]));
  const eventId = idOf(
    await sql<{ id: string }>(
      `insert into events (organization_id, client_id, name, event_date, guests, price_per_head_minor, event_type, status)
       values (?, ?, 'Summer wedding', date '2027-06-19', 80, 4250, 'wedding', 'confirmed') returning id`,
      [organizationId, clientId],
    ),
  );
  await sql(
    `insert into dishes (organization_id, event_id, recipe_id, position, course, servings) values (?, ?, ?, 1, 'dessert', 80)`,
    [organizationId, eventId, recipeId],
  );
  const invoiceId = idOf(
    await sql<{ id: string }>(
      `insert into invoices (organization_id, client_id, event_id, number, status, currency, issue_date, due_date, amount_paid_minor)
       values (?, ?, ?, 'INV-0001', 'sent', 'EUR', date '2027-06-20', date '2027-07-20', 1000) returning id`,
      [organizationId, clientId, eventId],
    ),
  );
  await sql(
    `insert into invoice_line_items (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor, tax_rate_basis_points)
     values (?, ?, 1, 'Dinner', 80000, 4250, 1900), (?, ?, 2, 'Service', 1000, 15000, 1900)`,
    [organizationId, invoiceId, organizationId, invoiceId],
  );
  return { recipeId, clientId, eventId, invoiceId };
};

/** Inserts `count` clients named `<prefix> 0000`… in one statement; returns their ids. */
export const insertClients = async (sql: Sql, organizationId: number, count: number, prefix = "Client"): Promise<number[]> => {
  const rows = await sql<{ id: string }>(
    `insert into clients (organization_id, name)
     select ?, ? || ' ' || lpad(n::text, 4, '0') from generate_series(1, ?) as n returning id`,
    [organizationId, prefix, count],
  );
  return rows.map((row) => Number(row.id));
};

/** Inserts `count` events one second apart (several share a timestamp, to exercise ties); returns their ids. */
export const insertEvents = async (sql: Sql, organizationId: number, count: number): Promise<number[]> => {
  const rows = await sql<{ id: string }>(
    `insert into events (organization_id, name, created_at)
     select ?, 'Bulk event ' || n, timestamptz '2026-01-01T00:00:00Z' + (n / 3) * interval '1 second'
     from generate_series(1, ?) as n returning id`,
    [organizationId, count],
  );
  return rows.map((row) => Number(row.id));
};

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export const closedPort = freePort;
