import { defineEntity, p } from "@mikro-orm/postgresql";

/** Invoices and their line items. Amounts are integer minor units; totals are computed, not stored. */

export const InvoiceEntity = defineEntity({
  name: "Invoice",
  tableName: "invoices",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    clientId: p.bigint("number").nullable(),
    eventId: p.bigint("number").nullable(),
    number: p.text(),
    status: p.text(),
    currency: p.string().length(3),
    issueDate: p.date(),
    dueDate: p.date(),
    amountPaidMinor: p.bigint("number"),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
});

export const InvoiceLineItemEntity = defineEntity({
  name: "InvoiceLineItem",
  tableName: "invoice_line_items",
  properties: {
    id: p.bigint("number").primary().autoincrement(),
    organizationId: p.bigint("number"),
    invoiceId: p.bigint("number"),
    position: p.integer(),
    description: p.text(),
    quantityMilli: p.bigint("number"),
    unitPriceMinor: p.bigint("number"),
    taxRateBasisPoints: p.integer(),
  },
});
