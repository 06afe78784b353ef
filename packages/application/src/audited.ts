import type { Actor, AuditDetails } from "@platter/domain";
import { AuditLog, inOneTransaction } from "@platter/persistence";
import { Effect } from "effect";

/** What an audit row says: the action done (`api_key.created`), to what (`api_key 12`). */
export interface AuditEntry {
  readonly action: string;
  readonly subject: string;
  /** What the change changed, before and after (an endpoint's edit). */
  readonly details?: AuditDetails;
}

/**
 * `change`, and the audit row `entryOf` its result names (none when it changed nothing), in one
 * transaction: a change is never left unaudited, and no audit row names a change that failed.
 */
export const audited = <A, E, R>(actor: Actor, change: Effect.Effect<A, E, R>, entryOf: (result: A) => AuditEntry | undefined) =>
  inOneTransaction(Effect.tap(change, (result) => {
    const entry = entryOf(result);
    return entry === undefined ? Effect.void : AuditLog.use((log) => log.record(actor, entry.action, entry.subject, entry.details));
  }));

/** `change`, and one audit row for each entry `entriesOf` its result names, in one transaction (as `audited`). */
export const auditedEach = <A, E, R>(actor: Actor, change: Effect.Effect<A, E, R>, entriesOf: (result: A) => ReadonlyArray<AuditEntry>) =>
  inOneTransaction(Effect.tap(change, (result) =>
    Effect.forEach(entriesOf(result), (entry) => AuditLog.use((log) => log.record(actor, entry.action, entry.subject, entry.details)), { discard: true })));
