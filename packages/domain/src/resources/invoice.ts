import { Schema } from "effect";
import { CursorId, CursorTimestamp } from "../cursor-keys.ts";
import type { Listing } from "../pagination.ts";

/** Invoice: a bill to a client, its line items and exactly computed totals. */

export const INVOICE_STATUSES = ["draft", "sent", "paid", "void"] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** Totals in major units of the invoice currency, computed from integer minor units. */
const totals = {
  subtotal: Schema.Finite,
  tax: Schema.Finite,
  total: Schema.Finite,
  amount_paid: Schema.Finite,
  balance_due: Schema.Finite,
};

export const Invoice = Schema.Struct({
  id: Schema.Int,
  number: Schema.String,
  status: Schema.Literals(INVOICE_STATUSES),
  currency: Schema.String,
  client_id: Schema.NullOr(Schema.Int),
  event_id: Schema.NullOr(Schema.Int),
  issue_date: Schema.String,
  due_date: Schema.String,
  ...totals,
  created_at: Schema.String,
});
export type Invoice = typeof Invoice.Type;

export const LineItem = Schema.Struct({
  id: Schema.Int,
  description: Schema.String,
  quantity: Schema.Finite,
  unit_price: Schema.Finite,
  /** Percent, e.g. `20` for 20 %. */
  tax_rate: Schema.Finite,
  /** quantity × unit_price, rounded to the minor unit, before tax. */
  amount: Schema.Finite,
});
export type LineItem = typeof LineItem.Type;

export const InvoiceDetail = Schema.Struct({ ...Invoice.fields, line_items: Schema.Array(LineItem) });
export type InvoiceDetail = typeof InvoiceDetail.Type;

/** Newest first: `created_at` then `id`, both descending. */
export const invoiceListing: Listing<Invoice, readonly [string, number]> = {
  endpoint: "invoices",
  direction: "desc",
  cursorKey: Schema.Tuple([CursorTimestamp, CursorId]),
  keyOf: (invoice) => [invoice.created_at, invoice.id],
};
