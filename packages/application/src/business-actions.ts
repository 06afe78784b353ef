import {
  type Actor, type InquiryReceive, invoiceTotals, invoiceTransition, orDieButOutage, proposalTransition,
} from "@platter/domain";
import { ClientRepository, EventRepository, inOneTransaction, WebhookMessages } from "@platter/persistence";
import { BusinessRecords } from "@platter/persistence/operator";
import { Effect } from "effect";

/**
 * Business actions: state changes made in the catering application itself (the CLI's operator, a
 * sandbox's trigger, internal teams importing this package). Each checks its transition (the
 * domain's), changes state and records its webhook message in one transaction of the actor's
 * organization; an impossible transition fails and writes nothing. Business records write no audit
 * row: their record is the webhook message.
 */

/** draft or sent → `to`, and its message (`invoice.sent`, `invoice.paid`: paid in full). */
const moveInvoice = <To extends "sent" | "paid">(actor: Actor, id: number, to: To) =>
  inOneTransaction(Effect.gen(function* () {
    const records = yield* BusinessRecords;
    yield* Effect.fromResult(invoiceTransition(yield* records.lockInvoiceStatus(actor.scope, id), to));
    const paid = to === "paid" ? invoiceTotals((yield* records.invoice(actor.scope, id)).lines, 0).total : null;
    yield* records.setInvoiceStatus(actor.scope, id, to, paid);
    const { invoice } = yield* records.invoice(actor.scope, id);
    yield* WebhookMessages.use((messages) =>
      messages.record(actor.scope, { type: to === "sent" ? "invoice.sent" : "invoice.paid", data: { ...invoice, name: invoice.number } }));
    return { id, status: to };
  }));

export const BusinessActions = {
  /** draft → sent, and `invoice.sent`; `NotFound` for another organization's, `InvalidTransition` from any other status. */
  sendInvoice: (actor: Actor, id: number) => moveInvoice(actor, id, "sent"),
  /** → paid in full, and `invoice.paid`. */
  payInvoice: (actor: Actor, id: number) => moveInvoice(actor, id, "paid"),
  /** A proposal is approved once, and `proposal.approved` names it by its title. */
  approveProposal: (actor: Actor, id: number) =>
    inOneTransaction(Effect.gen(function* () {
      const records = yield* BusinessRecords;
      yield* Effect.fromResult(proposalTransition(yield* records.lockProposalStatus(actor.scope, id), "approved"));
      const approved = yield* records.markProposalApproved(actor.scope, id);
      yield* WebhookMessages.use((messages) => messages.record(actor.scope, { type: "proposal.approved", data: approved }));
      return { id, status: "approved" as const };
    })),
  /**
   * A new online catering request: the requester becomes a client and the request an event in
   * `inquiry` status; `event.inquiry` carries the event as the API shows it.
   */
  receiveInquiry: (actor: Actor, inquiry: InquiryReceive) =>
    inOneTransaction(Effect.gen(function* () {
      const clientId = yield* ClientRepository.use((clients) =>
        clients.insert(actor.scope, { name: inquiry.name, email: inquiry.email ?? null, phone: inquiry.phone ?? null, company: null }));
      const events = yield* EventRepository;
      const id = yield* events.insert(actor.scope, {
        clientId, name: `Inquiry from ${inquiry.name}`, eventDate: inquiry.event_date ?? null, guests: inquiry.guests ?? null,
        pricePerHeadMinor: null, eventType: null,
      });
      const event = yield* orDieButOutage(events.read(actor.scope, id));
      yield* WebhookMessages.use((messages) => messages.record(actor.scope, { type: "event.inquiry", data: event }));
      return { id, client_id: clientId };
    })),
};
