import type { Actor } from "@platter/domain";
import { DeveloperSessions } from "@platter/persistence";
import { audited, auditedEach } from "./audited.ts";

/**
 * An organization's Developer-area sessions, as an actor sees and ends them: a leaked sign-in link's
 * session can be ended from another session or by the operator. Each ended session is audited
 * `developer_session.ended`; its next request is signed out.
 */

/** The audit entry of ending session `id`. */
const ended = (id: number) => ({ action: "developer_session.ended", subject: `developer_session ${id}` });

/** Listing and ending an organization's Developer-area sessions, each end audited. */
export const DeveloperAreaSessions = {
  /** The organization's live sessions, the most recently seen first. */
  list: (actor: Actor) => DeveloperSessions.use((sessions) => sessions.list(actor.scope)),
  /**
   * Ends session `id` of the organization (the actor's own too: that is signing out), audited
   * `developer_session.ended`; ending one already ended or expired changes (and records) nothing.
   * `NotFound` for another organization's.
   */
  end: (actor: Actor, id: number) =>
    audited(actor, DeveloperSessions.use((sessions) => sessions.end(actor.scope, id)), ({ changed }) => (changed ? ended(id) : undefined)),
  /**
   * Ends every live session of the organization except the acting session's own (the operator ends
   * them all); one `developer_session.ended` row for each. Returns the ids ended.
   */
  endOthers: (actor: Actor) =>
    auditedEach(
      actor,
      DeveloperSessions.use((sessions) => sessions.endAll(actor.scope, actor._tag === "DeveloperSession" ? actor.sessionId : undefined)),
      (ids) => ids.map(ended),
    ),
};
