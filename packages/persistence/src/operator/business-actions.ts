import {
  fromMinorUnits, type InquiryReceive, type InvalidTransition, invoiceTotals, invoiceTransition, type InvoiceStatus, NotFound,
  type OrgScope, proposalTransition, type ProposalStatus, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { orDieButOutage } from "@platter/postgres";
import { Database } from "../database.ts";
import { ClientEntity, EventEntity } from "../entities/index.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { type OrgSql, orgSql, sql } from "../org-sql.ts";
import { readEvent } from "../repositories/event.repository.ts";
import { amounts, readInvoiceRow, toInvoice } from "../repositories/invoice.repository.ts";
import { recordMessage } from "../repositories/webhook-message.ts";

/**
 * Business actions: state changes made in the catering application itself (here: the CLI, and
 * internal teams importing this package). Each changes state and records its webhook message in
 * one transaction of the organization; an impossible transition fails and writes nothing.
 */

type TransitionError = NotFound | InvalidTransition;

/** Locks a row of the scope for the rest of the transaction and returns its status, or `NotFound`. */
const lockStatus = <Status>(tx: OrgSql, table: "invoices" | "proposals", id: number) =>
  Effect.map(tx.one<{ status: Status }>({ columns: "r.status", from: table, as: "r", where: sql`r.id = ${id}`, rest: sql`for update` }), (row) => row.status);

const moveInvoice = <To extends "sent" | "paid">(tx: OrgSql, id: number, to: To) =>
  Effect.gen(function* () {
    yield* Effect.fromResult(invoiceTransition(yield* lockStatus<InvoiceStatus>(tx, "invoices", id), to));
    const before = yield* readInvoiceRow(tx, id);
    const paid = to === "paid" ? invoiceTotals(before.lines.map(amounts), 0).total : null;
    yield* tx.update({
      table: "invoices",
      as: "i",
      set: sql`status = ${to}, amount_paid_minor = coalesce(${paid}::bigint, i.amount_paid_minor)`,
      where: sql`i.id = ${id}`,
    });
    const invoice = toInvoice(yield* readInvoiceRow(tx, id));
    yield* recordMessage(tx, { type: to === "sent" ? "invoice.sent" : "invoice.paid", data: { ...invoice, name: invoice.number } });
    return { id, status: to };
  });

interface ApprovedRow {
  event_id: string;
  title: string;
  status: ProposalStatus;
  total_minor: string;
  created_at: string;
  approved_at: string | null;
}

export class BusinessActions extends Context.Service<
  BusinessActions,
  {
    /** draft → sent, and `invoice.sent`. */
    readonly sendInvoice: (scope: OrgScope, id: number) => Effect.Effect<{ readonly id: number; readonly status: "sent" }, TransitionError | DatabaseUnavailable>;
    /** → paid in full, and `invoice.paid`. */
    readonly payInvoice: (scope: OrgScope, id: number) => Effect.Effect<{ readonly id: number; readonly status: "paid" }, TransitionError | DatabaseUnavailable>;
    /** A proposal is approved once, and `proposal.approved` names it by its title. */
    readonly approveProposal: (
      scope: OrgScope,
      id: number,
    ) => Effect.Effect<{ readonly id: number; readonly status: "approved" }, TransitionError | DatabaseUnavailable>;
    /**
     * A new online catering request: the requester becomes a client and the request an event in
     * `inquiry` status; `event.inquiry` carries the event as the API shows it.
     */
    readonly receiveInquiry: (
      scope: OrgScope,
      inquiry: InquiryReceive,
    ) => Effect.Effect<{ readonly id: number; readonly client_id: number }, DatabaseUnavailable>;
  }
>()("platter/persistence/BusinessActions") {
  static readonly layer = Layer.effect(
    BusinessActions,
    Effect.gen(function* () {
      const database = yield* Database;
      return BusinessActions.of({
        sendInvoice: (scope: OrgScope, id: number) =>
          orgSql(database, scope).transaction((tx) => moveInvoice(tx, id, "sent")),
        payInvoice: (scope: OrgScope, id: number) =>
          orgSql(database, scope).transaction((tx) => moveInvoice(tx, id, "paid")),
        approveProposal: (scope: OrgScope, id: number) =>
          orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              yield* Effect.fromResult(proposalTransition(yield* lockStatus<ProposalStatus>(tx, "proposals", id), "approved"));
              const [row] = yield* tx.update<ApprovedRow>({
                table: "proposals",
                as: "p",
                set: sql`status = 'approved', approved_at = now()`,
                where: sql`p.id = ${id}`,
                returning: `p.event_id, p.title, p.status, p.total_minor, ${isoTimestamp("p.created_at")} as created_at,
                  ${isoTimestamp("p.approved_at")} as approved_at`,
              });
              yield* recordMessage(tx, {
                type: "proposal.approved",
                data: {
                  id,
                  name: row!.title,
                  status: row!.status,
                  event_id: Number(row!.event_id),
                  total: fromMinorUnits(Number(row!.total_minor), scope.currency),
                  currency: scope.currency,
                  created_at: row!.created_at,
                  approved_at: row!.approved_at,
                },
              });
              return { id, status: "approved" as const };
            }),
          ),
        receiveInquiry: (scope: OrgScope, inquiry: InquiryReceive) =>
          orgSql(database, scope).transaction((tx) =>
            Effect.gen(function* () {
              const clientId = yield* tx.insert(ClientEntity, {
                name: inquiry.name,
                email: inquiry.email ?? null,
                phone: inquiry.phone ?? null,
                company: null,
              });
              const id = yield* tx.insert(EventEntity, {
                client: clientId,
                name: `Inquiry from ${inquiry.name}`,
                eventDate: inquiry.event_date ?? null,
                guests: inquiry.guests ?? null,
                pricePerHeadMinor: null,
                eventType: null,
                status: "inquiry",
              });
              yield* recordMessage(tx, { type: "event.inquiry", data: yield* orDieButOutage(readEvent(tx, id)) });
              return { id, client_id: clientId };
            }),
          ),
      });
    }),
  );
}
