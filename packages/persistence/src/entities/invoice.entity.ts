import { defineEntity, p } from "@mikro-orm/postgresql";
import { identityId } from "./columns.ts";
import { ClientEntity } from "./catalog.entity.ts";
import { EventEntity } from "./event.entity.ts";
import { OrganizationEntity } from "./organization.entity.ts";

/** Invoices and their line items. Amounts are integer minor units; totals are computed, not stored. */

export const InvoiceEntity = defineEntity({
  name: "Invoice",
  tableName: "invoices",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    client: p.manyToOne(ClientEntity).nullable().deleteRule("no action"),
    event: p.manyToOne(EventEntity).nullable().deleteRule("no action"),
    number: p.text(),
    status: p.text().default("draft"),
    currency: p.string().columnType("char(3)"),
    issueDate: p.date(),
    dueDate: p.date(),
    amountPaidMinor: p.bigint("number").defaultRaw("0"),
    createdAt: p.datetime(3).defaultRaw("now()"),
  },
  uniques: [{ name: "invoices_organization_id_number_key", properties: ["organization", "number"] }],
  // Newest first. Raw DDL, not `columns` with `sort: "desc"`: MikroORM 7.2.1 reads the `id` of this
  // index back as ascending (it finds "id" inside "organization_id"), so the structured form would
  // always show a difference. The schema test compares the index's definition in the catalogue.
  indexes: [
    {
      name: "invoices_keyset_idx",
      expression: "create index invoices_keyset_idx on invoices (organization_id, created_at desc, id desc)",
    },
  ],
  checks: [
    { name: "invoices_status_check", expression: "status in ('draft', 'sent', 'paid', 'void')" },
    { name: "invoices_amount_paid_minor_check", expression: "amount_paid_minor >= 0" },
  ],
});

export const InvoiceLineItemEntity = defineEntity({
  name: "InvoiceLineItem",
  tableName: "invoice_line_items",
  properties: {
    id: identityId(),
    organization: p.manyToOne(OrganizationEntity),
    invoice: p.manyToOne(InvoiceEntity),
    position: p.integer(),
    description: p.text(),
    quantityMilli: p.bigint("number"),
    unitPriceMinor: p.bigint("number"),
    taxRateBasisPoints: p.integer().default(0),
  },
  indexes: [{ name: "invoice_line_items_invoice_idx", properties: ["invoice", "position"] }],
  checks: [{ name: "invoice_line_items_tax_rate_basis_points_check", expression: "tax_rate_basis_points >= 0 and tax_rate_basis_points <= 10000" }],
});
