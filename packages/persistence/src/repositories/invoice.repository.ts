import {
  fromMinorUnits, type Invoice, type InvoiceDetail, invoiceListing, invoiceTotals, lineNetMinor, type LineItemAmounts,
  type ListPage, type NotFound, type OrgScope, type PageRequest, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp, readKeysetPage } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";

/** Invoices: keyset list newest first with totals computed exactly, detail with line items. */

interface LineRow {
  id: number;
  description: string;
  quantity_milli: number;
  unit_price_minor: number;
  tax_rate_basis_points: number;
}

export interface InvoiceRow {
  id: string;
  number: string;
  status: Invoice["status"];
  currency: string;
  client_id: string | null;
  event_id: string | null;
  issue_date: string;
  due_date: string;
  amount_paid_minor: string;
  created_at: string;
  lines: LineRow[];
}

// Lines come with each invoice (one round trip); totals are computed in the domain, never in SQL floats.
const COLUMNS = `i.id, i.number, i.status, i.currency, i.client_id, i.event_id, i.issue_date::text as issue_date,
    i.due_date::text as due_date, i.amount_paid_minor, ${isoTimestamp("i.created_at")} as created_at,
    coalesce((select json_agg(json_build_object('id', l.id, 'description', l.description,
        'quantity_milli', l.quantity_milli, 'unit_price_minor', l.unit_price_minor,
        'tax_rate_basis_points', l.tax_rate_basis_points) order by l.position, l.id)
      from invoice_line_items l where l.invoice_id = i.id and l.organization_id = i.organization_id), '[]') as lines`;

/** Reads one invoice of the scope with its line items, as stored. */
export const readInvoiceRow = (org: OrgSql, id: number): Effect.Effect<InvoiceRow, NotFound | DatabaseUnavailable> =>
  org.one<InvoiceRow>({ columns: COLUMNS, from: "invoices", as: "i", where: sql`i.id = ${id}` });

/** A stored line's amounts in the domain's terms. */
export const amounts = (line: LineRow): LineItemAmounts => ({
  quantityMilli: line.quantity_milli,
  unitPriceMinor: line.unit_price_minor,
  taxRateBasisPoints: line.tax_rate_basis_points,
});

export const toInvoice = (row: InvoiceRow): Invoice => {
  const totals = invoiceTotals(row.lines.map(amounts), Number(row.amount_paid_minor));
  const money = (minor: number) => fromMinorUnits(minor, row.currency);
  return {
    id: Number(row.id),
    number: row.number,
    status: row.status,
    currency: row.currency,
    client_id: row.client_id === null ? null : Number(row.client_id),
    event_id: row.event_id === null ? null : Number(row.event_id),
    issue_date: row.issue_date,
    due_date: row.due_date,
    subtotal: money(totals.subtotal),
    tax: money(totals.tax),
    total: money(totals.total),
    amount_paid: money(totals.amountPaid),
    balance_due: money(totals.balanceDue),
    created_at: row.created_at,
  };
};

const toLineItems = (row: InvoiceRow): InvoiceDetail["line_items"] =>
  row.lines.map((line) => ({
    id: line.id,
    description: line.description,
    quantity: line.quantity_milli / 1000,
    unit_price: fromMinorUnits(line.unit_price_minor, row.currency),
    tax_rate: line.tax_rate_basis_points / 100,
    amount: fromMinorUnits(lineNetMinor(amounts(line)), row.currency),
  }));

export class InvoiceRepository extends Context.Service<
  InvoiceRepository,
  {
    readonly list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) => Effect.Effect<ListPage<Invoice>, DatabaseUnavailable>;
    readonly get: (scope: OrgScope, id: number) => Effect.Effect<InvoiceDetail, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/InvoiceRepository") {
  static readonly layer = Layer.effect(
    InvoiceRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return InvoiceRepository.of({
        list: (scope: OrgScope, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            invoiceListing,
            { columns: COLUMNS, from: "invoices", as: "i", keyColumns: ["i.created_at", "i.id"], keyCasts: ["timestamptz", "bigint"] },
            page,
            toInvoice,
          ),
        get: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const row = yield* readInvoiceRow(orgSql(database, scope), id);
          return { ...toInvoice(row), line_items: toLineItems(row) };
        }),
      });
    }),
  );
}
