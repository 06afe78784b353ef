import { type Actor, type DeliveryLogFilter, NotFound, type PageRequest } from "@platter/domain";
import { AuditLog, type DeliveryFilter, DeliveryRepository } from "@platter/persistence";
import { Effect } from "effect";
import { audited } from "./audited.ts";

/**
 * What was sent where, as an actor reads it, and replays: a finished delivery is sent again with
 * the same envelope and bytes, a pending one waiting for its next try is tried now, and one already
 * due is left alone (and nothing is recorded, as nothing changed).
 */
export const Deliveries = {
  /** The organization's deliveries, newest first, with their attempts. */
  list: (actor: Actor, filter: DeliveryFilter) => DeliveryRepository.use((all) => all.list(actor.scope, filter)),
  /** One page of the delivery log, filtered. */
  log: (actor: Actor, filter: DeliveryLogFilter, page: PageRequest<readonly [string, number]>) =>
    DeliveryRepository.use((all) => all.log(actor.scope, filter, page)),
  /** A message by its envelope id, with every delivery and attempt; `NotFound` for another organization's. */
  message: (actor: Actor, envelopeId: string) => DeliveryRepository.use((all) => all.message(actor.scope, envelopeId)),

  /**
   * Sends delivery `id` now (of the message `envelopeId`, when given: `NotFound` for a delivery of
   * another). Audited `delivery.replayed` for a finished one, `delivery.retried_now` for a pending one.
   */
  replay: (actor: Actor, id: number, envelopeId?: string) =>
    audited(
      actor,
      // Read in the change's transaction, just before it: the action named is the state it changed.
      Effect.gen(function* () {
        const delivery = yield* DeliveryRepository.use((all) => all.find(actor.scope, id));
        if (envelopeId !== undefined && delivery.envelope_id !== envelopeId) return yield* new NotFound();
        const { retried } = yield* DeliveryRepository.use((all) => all.retry(actor.scope, id));
        return { retried, status: delivery.status, envelopeId: delivery.envelope_id };
      }),
      ({ retried, status, envelopeId: of }) => retried === 0 ? undefined : {
        action: status === "pending" ? "delivery.retried_now" : "delivery.replayed",
        subject: `delivery ${id} of message ${of}`,
      },
    ).pipe(Effect.map(({ retried }) => ({ retried }))),

  /** Sends every delivery of message `envelopeId` now, as `replay` does each; audited `message.replayed`. */
  replayMessage: (actor: Actor, envelopeId: string) =>
    Effect.gen(function* () {
      const message = yield* DeliveryRepository.use((all) => all.message(actor.scope, envelopeId));
      return yield* audited(actor, DeliveryRepository.use((all) => all.retryMessage(actor.scope, message.id)), ({ retried }) =>
        retried > 0 ? { action: "message.replayed", subject: `message ${envelopeId}` } : undefined);
    }),

  /**
   * Sends every failing delivery of endpoint `endpointId` (made at or after `since`, when given)
   * now. The replay commits batch by batch (never one long transaction), so its one audit row,
   * `deliveries.replayed_failed`, follows the last batch rather than sharing a transaction with all.
   */
  replayFailed: (actor: Actor, endpointId: number, since?: string) =>
    Effect.gen(function* () {
      const result = yield* DeliveryRepository.use((all) => all.retryFailed(actor.scope, endpointId, since));
      if (result.retried > 0) {
        const subject = `webhook_endpoint ${endpointId}${since === undefined ? "" : ` since ${since}`}`;
        yield* AuditLog.use((log) => log.record(actor, "deliveries.replayed_failed", subject));
      }
      return result;
    }),
};
