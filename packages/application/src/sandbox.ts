import { type Actor, type DatabaseUnavailable, type InvalidTransition, notASandbox, nothingLeftToTrigger, orDieButOutage, type WebhookEventType } from "@platter/domain";
import {
  type ClientRepository, type Database, type DeveloperSession, DeveloperSessions, type EventRepository, type IdempotencyKeys, Sandboxes,
  type SandboxTarget, type WebhookMessages,
} from "@platter/persistence";
import type { BusinessRecords } from "@platter/persistence/operator";
import { Effect } from "effect";
import { audited } from "./audited.ts";
import { BusinessActions } from "./business-actions.ts";
import { Clients, Events } from "./created-records.ts";
import { seedDemo } from "./demo-data.ts";

/**
 * An organization's sandbox, as an actor (a Developer-area session, the operator) opens, resets and
 * uses it: each of the six event types made to happen for real in the sandbox, through the same
 * storage calls the API and the operator use, so the message and its deliveries are written in
 * the change's transaction, with the audit row. Only in a sandbox: a live organization is refused.
 */

/** What a trigger made happen: the event type, and the record it is about (`invoice 3`). */
export interface Triggered {
  readonly type: WebhookEventType;
  readonly subject: string;
}

/** The demo record each transition acts on, and what to say when none is left. */
const TRANSITIONS = {
  "invoice.sent": { target: "draft_invoice", none: "no draft invoice left to send" },
  "invoice.paid": { target: "sent_invoice", none: "no sent invoice left to pay" },
  "proposal.approved": { target: "open_proposal", none: "no draft or sent proposal left to approve" },
} as const satisfies Record<string, { target: SandboxTarget; none: string }>;

/** The record `target` names, or the refusal that says to reset the data. */
const targetOf = (actor: Actor, type: keyof typeof TRANSITIONS) =>
  Effect.flatMap(Sandboxes.use((sandboxes) => sandboxes.target(actor.scope, TRANSITIONS[type].target)), (id) =>
    id === undefined ? Effect.fail(nothingLeftToTrigger(TRANSITIONS[type].none)) : Effect.succeed(id));

/** The stores a trigger may use. */
type TriggerStores = ClientRepository | EventRepository | BusinessRecords | WebhookMessages | IdempotencyKeys | Sandboxes | Database;

/** Makes `type` happen once in the actor's organization (already known to be a sandbox), through the same use case as for real; the record it is about. */
const happen = (actor: Actor, type: WebhookEventType): Effect.Effect<string, InvalidTransition | DatabaseUnavailable, TriggerStores> => {
  switch (type) {
    case "client.created":
      return Effect.map(
        orDieButOutage(Clients.create(actor, { name: "Sandbox client", email: "sandbox.client@example.com" })),
        (created) => `client ${created.id}`,
      );
    case "event.created":
      return Effect.map(orDieButOutage(Events.create(actor, { name: "Sandbox event", guests: 40 })), (created) => `event ${created.id}`);
    case "event.inquiry":
      return Effect.map(
        BusinessActions.receiveInquiry(actor, { name: "Sandbox inquiry", email: "sandbox.inquiry@example.com", guests: 60 }),
        (received) => `event ${received.id}`,
      );
    case "invoice.sent":
      return Effect.flatMap(targetOf(actor, type), (id) =>
        Effect.as(Effect.catchTag(BusinessActions.sendInvoice(actor, id), "NotFound", Effect.die), `invoice ${id}`));
    case "invoice.paid":
      return Effect.flatMap(targetOf(actor, type), (id) =>
        Effect.as(Effect.catchTag(BusinessActions.payInvoice(actor, id), "NotFound", Effect.die), `invoice ${id}`));
    case "proposal.approved":
      return Effect.flatMap(targetOf(actor, type), (id) =>
        Effect.as(Effect.catchTag(BusinessActions.approveProposal(actor, id), "NotFound", Effect.die), `proposal ${id}`));
  }
};

/** The refusal of a sandbox-only action on a live organization, before anything is done. */
const requireSandbox = (actor: Actor) =>
  Effect.flatMap(Sandboxes.use((sandboxes) => sandboxes.standing(actor.scope)), (standing) =>
    standing.kind === "sandbox" ? Effect.void : Effect.fail(notASandbox()));

/** Opening, resetting and using an organization's sandbox; each change audited in its own organization. */
export const Sandbox = {
  /** Whether the actor's organization is live (and its sandbox, if any) or a sandbox (and its live organization). */
  standing: (actor: Actor) => Sandboxes.use((sandboxes) => sandboxes.standing(actor.scope)),
  /**
   * The live organization's sandbox, created with the demo data when it has none (audited
   * `sandbox.created` in the live organization); again, it changes nothing. A sandbox's is refused.
   */
  create: (actor: Actor) =>
    audited(actor, Sandboxes.use((sandboxes) => sandboxes.open(actor.scope, seedDemo)), (sandbox) =>
      sandbox.created ? { action: "sandbox.created", subject: `organization ${sandbox.id}` } : undefined),
  /** The sandbox's business data deleted and the demo data seeded again, audited `sandbox.reset`; a live organization is refused. */
  reset: (actor: Actor) =>
    audited(actor, Sandboxes.use((sandboxes) => sandboxes.reset(actor.scope, seedDemo)), () => ({
      action: "sandbox.reset",
      subject: `organization ${actor.scope.organizationId}`,
    })),
  /**
   * Makes one event of `type` happen for real in the sandbox (audited `sandbox.triggered`), so its
   * endpoints get a delivery. A live organization is refused; so is a transition the demo data has
   * nothing left for ("Reset the sandbox's data to make more").
   */
  trigger: (actor: Actor, type: WebhookEventType) =>
    audited(
      actor,
      Effect.andThen(requireSandbox(actor), Effect.map(happen(actor, type), (subject): Triggered => ({ type, subject }))),
      (triggered) => ({ action: "sandbox.triggered", subject: `${triggered.subject} (${triggered.type})` }),
    ),
  /**
   * Switches a Developer-area browser between a live organization and its sandbox: a session of the
   * linked organization is opened (a single-use `switch` link made and used at once) and this one
   * ended. `NotFound` for a live organization without a sandbox; `InvalidTransition` for "back to
   * live" from a sandbox session that was not opened by a switch (an operator's link to the sandbox).
   */
  switchSession: (session: DeveloperSession, deviceHint?: string) =>
    Effect.gen(function* () {
      // Back to live only from a session that came in by a switch from it (see `linkedScope`).
      const scope = yield* Sandboxes.use((sandboxes) => sandboxes.linkedScope(session.scope, session.linkId));
      const sessions = yield* DeveloperSessions;
      const link = yield* sessions.createLink(scope, "switch");
      const opened = yield* Effect.orDie(sessions.signIn(link.token, deviceHint));
      yield* Effect.orDie(sessions.signOut(session));
      return opened;
    }),
};
