import type { Actor, AuditLogFilter, PageRequest } from "@platter/domain";
import { AuditLog } from "@platter/persistence";

/** The organization's audit log, as an actor reads it: who changed what, and when. */
export const AuditEntries = {
  /** One page of the log, newest first, filtered. */
  page: (actor: Actor, filter: AuditLogFilter, page: PageRequest<readonly [string, number]>) =>
    AuditLog.use((log) => log.page(actor.scope, filter, page)),
  /** The actions the log holds, alphabetically (the action filter's choices). */
  actions: (actor: Actor) => AuditLog.use((log) => log.actions(actor.scope)),
};
