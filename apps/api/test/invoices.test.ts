import type { OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiUnderTest, startApiUnderTest } from "./api-harness.ts";

/**
 * Invoices: totals computed exactly from integer minor units (tax rounded per line, half away
 * from zero), the same on the list and the detail; the detail carries its line items. Read only.
 */

let api: ApiUnderTest;
let org: OrganizationFixture;
beforeAll(async () => {
  api = await startApiUnderTest();
  org = await api.newOrganization("Invoices Catering");
});
afterAll(() => api?.close());

interface StoredLine {
  readonly description: string;
  readonly quantityMilli: number;
  readonly unitPriceMinor: number;
  readonly taxRateBasisPoints: number;
}

let invoiceNumber = 0;

/** Inserts an invoice and its lines (stored in reverse position order, to see the API sort them). */
const insertInvoice = async (fields: { currency?: string; amountPaidMinor?: number; status?: string; lines: ReadonlyArray<StoredLine> }) => {
  const [invoice] = await api.sql<{ id: string }>(
    `insert into invoices (organization_id, number, status, currency, issue_date, due_date, amount_paid_minor)
     values (?, ?, ?, ?, date '2026-04-01', date '2026-04-30', ?) returning id`,
    [org.id, `INV-${++invoiceNumber}`, fields.status ?? "sent", fields.currency ?? "EUR", fields.amountPaidMinor ?? 0],
  );
  const id = Number(invoice!.id);
  for (const [position, line] of [...fields.lines.entries()].reverse()) {
    await api.sql(
      `insert into invoice_line_items (organization_id, invoice_id, position, description, quantity_milli, unit_price_minor, tax_rate_basis_points)
       values (?, ?, ?, ?, ?, ?, ?)`,
      [org.id, id, position + 1, line.description, line.quantityMilli, line.unitPriceMinor, line.taxRateBasisPoints],
    );
  }
  return id;
};

const detailOf = async (id: number) => {
  const response = await api.call("GET", `/v1/invoices/${id}`, { key: org.readKey });
  expect(response.status).toBe(200);
  return response.body;
};

const listed = async (id: number) => {
  const response = await api.call("GET", "/v1/invoices?limit=500", { key: org.readKey });
  expect(response.status).toBe(200);
  return response.body.data.find((invoice: any) => invoice.id === id);
};

const TOTALS_CASES = [
  {
    label: "3 × 19.99 at 20 %",
    invoice: { lines: [{ description: "Canapés", quantityMilli: 3_000, unitPriceMinor: 1_999, taxRateBasisPoints: 2_000 }] },
    totals: { subtotal: 59.97, tax: 11.99, total: 71.96, amount_paid: 0, balance_due: 71.96 },
    lineItems: [{ description: "Canapés", quantity: 3, unit_price: 19.99, tax_rate: 20, amount: 59.97 }],
  },
  {
    label: "several lines, rounded per line half away from zero, partly paid",
    invoice: {
      amountPaidMinor: 5_000,
      lines: [
        { description: "Half portion", quantityMilli: 500, unitPriceMinor: 333, taxRateBasisPoints: 2_000 },
        { description: "Ten cents", quantityMilli: 1_000, unitPriceMinor: 10, taxRateBasisPoints: 0 },
        { description: "Twenty cents", quantityMilli: 1_000, unitPriceMinor: 20, taxRateBasisPoints: 0 },
        { description: "Two and a half cents", quantityMilli: 2_500, unitPriceMinor: 1, taxRateBasisPoints: 1_900 },
        { description: "Mains", quantityMilli: 7_000, unitPriceMinor: 1_234, taxRateBasisPoints: 700 },
      ],
    },
    // 1.665 → 1.67 (tax 0.334 → 0.33); 0.10; 0.20; 0.025 → 0.03 (tax 0.0057 → 0.01); 86.38 (tax 6.0466 → 6.05)
    totals: { subtotal: 88.38, tax: 6.39, total: 94.77, amount_paid: 50, balance_due: 44.77 },
    lineItems: [
      { description: "Half portion", quantity: 0.5, unit_price: 3.33, tax_rate: 20, amount: 1.67 },
      { description: "Ten cents", quantity: 1, unit_price: 0.1, tax_rate: 0, amount: 0.1 },
      { description: "Twenty cents", quantity: 1, unit_price: 0.2, tax_rate: 0, amount: 0.2 },
      { description: "Two and a half cents", quantity: 2.5, unit_price: 0.01, tax_rate: 19, amount: 0.03 },
      { description: "Mains", quantity: 7, unit_price: 12.34, tax_rate: 7, amount: 86.38 },
    ],
  },
  {
    label: "a currency without minor units (JPY), fully paid",
    invoice: {
      currency: "JPY",
      amountPaidMinor: 3_300,
      status: "paid",
      lines: [{ description: "Bento", quantityMilli: 2_000, unitPriceMinor: 1_500, taxRateBasisPoints: 1_000 }],
    },
    totals: { subtotal: 3_000, tax: 300, total: 3_300, amount_paid: 3_300, balance_due: 0 },
    lineItems: [{ description: "Bento", quantity: 2, unit_price: 1_500, tax_rate: 10, amount: 3_000 }],
  },
  {
    label: "a currency with three decimals (KWD)",
    invoice: {
      currency: "KWD",
      lines: [{ description: "Machboos", quantityMilli: 1_000, unitPriceMinor: 1_234, taxRateBasisPoints: 500 }],
    },
    totals: { subtotal: 1.234, tax: 0.062, total: 1.296, amount_paid: 0, balance_due: 1.296 },
    lineItems: [{ description: "Machboos", quantity: 1, unit_price: 1.234, tax_rate: 5, amount: 1.234 }],
  },
  {
    label: "large amounts, still exact",
    invoice: {
      lines: [{ description: "Banquet season", quantityMilli: 1_000_000, unitPriceMinor: 999_999_999, taxRateBasisPoints: 2_500 }],
    },
    totals: { subtotal: 9_999_999_990, tax: 2_499_999_997.5, total: 12_499_999_987.5, amount_paid: 0, balance_due: 12_499_999_987.5 },
    lineItems: [{ description: "Banquet season", quantity: 1_000, unit_price: 9_999_999.99, tax_rate: 25, amount: 9_999_999_990 }],
  },
  {
    label: "no line items",
    invoice: { lines: [] },
    totals: { subtotal: 0, tax: 0, total: 0, amount_paid: 0, balance_due: 0 },
    lineItems: [],
  },
];

describe("invoice totals", () => {
  it.each(TOTALS_CASES)("$label: exact on the detail", async ({ invoice, totals, lineItems }) => {
    const id = await insertInvoice(invoice);
    const detail = await detailOf(id);
    expect(detail).toMatchObject({ id, currency: invoice.currency ?? "EUR", ...totals });
    expect(detail.line_items).toEqual(lineItems.map((line) => ({ id: expect.any(Number), ...line })));
  });

  it.each(TOTALS_CASES)("$label: the same on the list, without line items", async ({ invoice, totals }) => {
    const id = await insertInvoice(invoice);
    const row = await listed(id);
    expect(row).toMatchObject({ id, ...totals });
    expect(row).not.toHaveProperty("line_items");
  });
});

describe("GET /v1/invoices/{id}", () => {
  it("shows the invoice's own fields", async () => {
    const [client] = await api.sql<{ id: string }>("insert into clients (organization_id, name) values (?, 'Billed') returning id", [org.id]);
    const [event] = await api.sql<{ id: string }>("insert into events (organization_id, name) values (?, 'Billed event') returning id", [org.id]);
    const [invoice] = await api.sql<{ id: string }>(
      `insert into invoices (organization_id, client_id, event_id, number, status, currency, issue_date, due_date)
       values (?, ?, ?, 'INV-FIELDS', 'draft', 'EUR', date '2026-07-01', date '2026-07-15') returning id`,
      [org.id, client!.id, event!.id],
    );
    const detail = await detailOf(Number(invoice!.id));
    expect(detail).toMatchObject({
      id: Number(invoice!.id),
      number: "INV-FIELDS",
      status: "draft",
      currency: "EUR",
      client_id: Number(client!.id),
      event_id: Number(event!.id),
      issue_date: "2026-07-01",
      due_date: "2026-07-15",
      line_items: [],
    });
    expect(detail.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("agrees with the list form on every list field", async () => {
    const id = await insertInvoice(TOTALS_CASES[1]!.invoice);
    const { line_items: _lines, ...listFields } = await detailOf(id);
    expect(listFields).toEqual(await listed(id));
  });
});

describe("invoices are read only", () => {
  it.each(["POST", "PUT", "PATCH", "DELETE"])("%s /v1/invoices → 404 Unknown endpoint", async (method) => {
    const response = await api.call(method, "/v1/invoices", { key: org.writeKey, body: { number: "X" } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ error: "Unknown endpoint" });
  });
});
