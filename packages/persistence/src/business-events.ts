import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type InquiryReceive, type InvalidTransition, invoiceTotals, invoiceTransition, type InvoiceStatus, NotFound, operatorScope,
  proposalTransition, type ProposalStatus, fromMinorUnits,
} from "@platter/domain";
import { Effect, Result } from "effect";
import type { Orm } from "./database.ts";
import { ClientEntity, EventEntity } from "./entities/index.ts";
import { EVENT_SELECT, type EventRow, toEvent } from "./repositories/event.repository.ts";
import { INVOICE_SELECT, type InvoiceRow, toInvoice } from "./repositories/invoice.repository.ts";
import { recordOutboxEvent } from "./repositories/outbox.ts";
import { isoTimestamp } from "./scoped-sql.ts";

/**
 * Business events: state changes made in the service's own application (here: the CLI, and
 * internal teams importing this package). Each changes state and writes its outbox row in one
 * transaction; an impossible transition fails and writes nothing.
 */

/** Runs `work` in a transaction; a failed Result rolls it back and is returned as the failure. */
const inTransaction = <A, E>(orm: Orm, work: (em: EntityManager) => Promise<Result.Result<A, E>>): Effect.Effect<A, E> =>
  Effect.flatMap(
    Effect.promise(async () => {
      const rollback = Symbol("rollback");
      let outcome: Result.Result<A, E> | undefined;
      try {
        await orm.em.fork().transactional(async (em) => {
          outcome = await work(em);
          if (Result.isFailure(outcome)) throw rollback;
        });
      } catch (error) {
        if (error !== rollback) throw error;
      }
      return outcome!;
    }),
    (outcome) => (Result.isSuccess(outcome) ? Effect.succeed(outcome.success) : Effect.fail(outcome.failure)),
  );

interface LockedInvoice {
  organization_id: string;
  status: InvoiceStatus;
  currency: string;
}

type TransitionError = NotFound | InvalidTransition;

const moveInvoice = (orm: Orm, invoiceId: number, to: "sent" | "paid") =>
  inTransaction<{ id: number; status: "sent" | "paid" }, TransitionError>(orm, async (em) => {
    const [locked] = await em.execute<LockedInvoice[]>(
      "select organization_id, status, currency from invoices where id = ? for update",
      [invoiceId],
    );
    if (locked === undefined) return Result.fail(new NotFound());
    const moved = invoiceTransition(locked.status, to);
    if (Result.isFailure(moved)) return Result.fail(moved.failure);
    const organizationId = Number(locked.organization_id);
    const [before] = await em.execute<InvoiceRow[]>(`${INVOICE_SELECT} and i.id = ?`, [organizationId, invoiceId]);
    const paid = to === "paid" ? invoiceTotals(before!.lines.map((l) => ({
      quantityMilli: l.quantity_milli, unitPriceMinor: l.unit_price_minor, taxRateBasisPoints: l.tax_rate_basis_points,
    })), 0).total : undefined;
    await em.execute(
      "update invoices set status = ?, amount_paid_minor = coalesce(?, amount_paid_minor) where id = ?",
      [to, paid ?? null, invoiceId],
    );
    const [after] = await em.execute<InvoiceRow[]>(`${INVOICE_SELECT} and i.id = ?`, [organizationId, invoiceId]);
    const invoice = toInvoice(after!);
    await recordOutboxEvent(em, operatorScope(organizationId, locked.currency), {
      type: to === "sent" ? "invoice.sent" : "invoice.paid",
      data: { ...invoice, name: invoice.number },
    });
    return Result.succeed({ id: invoiceId, status: to });
  });

/** draft → sent, and `invoice.sent`. */
export const sendInvoice = (orm: Orm, invoiceId: number) => moveInvoice(orm, invoiceId, "sent");

/** → paid in full, and `invoice.paid`. */
export const payInvoice = (orm: Orm, invoiceId: number) => moveInvoice(orm, invoiceId, "paid");

interface ProposalRow {
  id: string;
  organization_id: string;
  event_id: string;
  title: string;
  status: ProposalStatus;
  total_minor: string;
  currency: string;
  created_at: string;
  approved_at: string | null;
}

/** A proposal is approved once, and `proposal.approved` names it by its title. */
export const approveProposal = (orm: Orm, proposalId: number) =>
  inTransaction<{ id: number; status: "approved" }, TransitionError>(orm, async (em) => {
    const [locked] = await em.execute<{ status: ProposalStatus }[]>(
      "select status from proposals where id = ? for update",
      [proposalId],
    );
    if (locked === undefined) return Result.fail(new NotFound());
    const moved = proposalTransition(locked.status, "approved");
    if (Result.isFailure(moved)) return Result.fail(moved.failure);
    const [row] = await em.execute<ProposalRow[]>(
      `update proposals p set status = 'approved', approved_at = now() from organizations o
       where p.id = ? and o.id = p.organization_id
       returning p.id, p.organization_id, p.event_id, p.title, p.status, p.total_minor, o.currency,
         ${isoTimestamp("p.created_at")} as created_at, ${isoTimestamp("p.approved_at")} as approved_at`,
      [proposalId],
    );
    const organizationId = Number(row!.organization_id);
    await recordOutboxEvent(em, operatorScope(organizationId, row!.currency), {
      type: "proposal.approved",
      data: {
        id: proposalId,
        name: row!.title,
        status: row!.status,
        event_id: Number(row!.event_id),
        total: fromMinorUnits(Number(row!.total_minor), row!.currency),
        currency: row!.currency,
        created_at: row!.created_at,
        approved_at: row!.approved_at,
      },
    });
    return Result.succeed({ id: proposalId, status: "approved" });
  });

/**
 * A new online catering request: the requester becomes a client and the request an event in
 * `inquiry` status; `event.inquiry` carries the event as the API shows it.
 */
export const receiveInquiry = (orm: Orm, organizationId: number, inquiry: InquiryReceive) =>
  inTransaction<{ id: number; client_id: number }, NotFound>(orm, async (em) => {
    const [org] = await em.execute<{ currency: string }[]>("select currency from organizations where id = ?", [organizationId]);
    if (org === undefined) return Result.fail(new NotFound());
    const clientId = await em.insert(ClientEntity, {
      organizationId,
      name: inquiry.name,
      email: inquiry.email ?? null,
      phone: inquiry.phone ?? null,
      company: null,
    });
    const eventId = Number(
      await em.insert(EventEntity, {
        organizationId,
        clientId: Number(clientId),
        name: `Inquiry from ${inquiry.name}`,
        eventDate: inquiry.event_date ?? null,
        guests: inquiry.guests ?? null,
        pricePerHeadMinor: null,
        eventType: null,
        status: "inquiry",
      }),
    );
    const [row] = await em.execute<EventRow[]>(`${EVENT_SELECT} and e.id = ?`, [organizationId, eventId]);
    await recordOutboxEvent(em, operatorScope(organizationId, org.currency), {
      type: "event.inquiry",
      data: toEvent(row!, org.currency),
    });
    return Result.succeed({ id: eventId, client_id: Number(clientId) });
  });
