import {
  fromMinorUnits, type Invoice, type InvoiceStatus, type LineItemAmounts, NotFound, type OrgScope, type ProposalStatus,
  type WebhookMessage, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";
import { amounts, readInvoiceRow, toInvoice } from "../repositories/invoice.repository.ts";

/**
 * The statements behind the business actions (an invoice sent or paid, a proposal approved): lock
 * a record's status, read an invoice, write the new status. The actions themselves, with their
 * transition rules and messages, are the application's `BusinessActions`; every call here joins
 * the action's transaction (`inOneTransaction`).
 */

/** A proposal as `proposal.approved` carries it. */
export type ApprovedProposal = Extract<WebhookMessage, { type: "proposal.approved" }>["data"];

/** An invoice as the API shows it, and its lines' amounts (to compute what paying it in full is). */
export interface InvoiceWithLines {
  readonly invoice: Invoice;
  readonly lines: ReadonlyArray<LineItemAmounts>;
}

interface ApprovedRow {
  event_id: string;
  title: string;
  status: ProposalStatus;
  total_minor: string;
  created_at: string;
  approved_at: string | null;
}

/** Locks a row of the scope for the rest of the transaction and returns its status, or `NotFound`. */
const lockStatus = <Status>(tx: OrgSql, table: "invoices" | "proposals", id: number) =>
  Effect.map(tx.one<{ status: Status }>({ columns: "r.status", from: table, as: "r", where: sql`r.id = ${id}`, rest: sql`for update` }), (row) => row.status);

export class BusinessRecords extends Context.Service<
  BusinessRecords,
  {
    /** An invoice's status, the invoice locked until the transaction ends; `NotFound` for another organization's. */
    readonly lockInvoiceStatus: (scope: OrgScope, id: number) => Effect.Effect<InvoiceStatus, NotFound | DatabaseUnavailable>;
    /** An invoice as the API shows it, with its lines' amounts. */
    readonly invoice: (scope: OrgScope, id: number) => Effect.Effect<InvoiceWithLines, NotFound | DatabaseUnavailable>;
    /** Writes an invoice's status, and its amount paid when `amountPaidMinor` is given. */
    readonly setInvoiceStatus: (scope: OrgScope, id: number, status: InvoiceStatus, amountPaidMinor: number | null) => Effect.Effect<void, DatabaseUnavailable>;
    /** A proposal's status, the proposal locked until the transaction ends; `NotFound` for another organization's. */
    readonly lockProposalStatus: (scope: OrgScope, id: number) => Effect.Effect<ProposalStatus, NotFound | DatabaseUnavailable>;
    /** Marks a proposal approved now (the database's `now()`) and returns it as `proposal.approved` carries it; `NotFound` for another organization's. */
    readonly markProposalApproved: (scope: OrgScope, id: number) => Effect.Effect<ApprovedProposal, NotFound | DatabaseUnavailable>;
  }
>()("platter/persistence/BusinessRecords") {
  static readonly layer = Layer.effect(
    BusinessRecords,
    Effect.gen(function* () {
      const database = yield* Database;
      return BusinessRecords.of({
        lockInvoiceStatus: (scope: OrgScope, id: number) => lockStatus<InvoiceStatus>(orgSql(database, scope), "invoices", id),
        invoice: (scope: OrgScope, id: number) =>
          Effect.map(readInvoiceRow(orgSql(database, scope), id), (row) => ({ invoice: toInvoice(row), lines: row.lines.map(amounts) })),
        setInvoiceStatus: (scope: OrgScope, id: number, status: InvoiceStatus, amountPaidMinor: number | null) =>
          Effect.asVoid(orgSql(database, scope).update({
            table: "invoices",
            as: "i",
            set: sql`status = ${status}, amount_paid_minor = coalesce(${amountPaidMinor}::bigint, i.amount_paid_minor)`,
            where: sql`i.id = ${id}`,
          })),
        lockProposalStatus: (scope: OrgScope, id: number) => lockStatus<ProposalStatus>(orgSql(database, scope), "proposals", id),
        markProposalApproved: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const [row] = yield* orgSql(database, scope).update<ApprovedRow>({
            table: "proposals",
            as: "p",
            set: sql`status = 'approved', approved_at = now()`,
            where: sql`p.id = ${id}`,
            returning: `p.event_id, p.title, p.status, p.total_minor, ${isoTimestamp("p.created_at")} as created_at,
              ${isoTimestamp("p.approved_at")} as approved_at`,
          });
          if (row === undefined) return yield* new NotFound();
          return {
            id,
            name: row.title,
            status: row.status,
            event_id: Number(row.event_id),
            total: fromMinorUnits(Number(row.total_minor), scope.currency),
            currency: scope.currency,
            created_at: row.created_at,
            approved_at: row.approved_at,
          };
        }),
      });
    }),
  );
}
