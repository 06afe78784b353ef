import { nowPlusSql } from "../database-clock.ts";
import type { Statement } from "../org-sql.ts";

/**
 * The one lease mechanism, used by every leased queue: the dispatcher's deliveries
 * (delivery-claim.ts, attempt-record.ts), the operator's notices (operator-notices.ts), the local
 * listeners' deliveries and streams (local-listeners.ts) and the alert e-mails (alert-mails.ts).
 *
 * A lease is two columns: a token (a fresh `gen_random_uuid()` per lease) and an expiry, both written
 * from the database's `now()` (database-clock.ts), never a process's clock. The life of a lease:
 * - **unleased**: no expiry, or one past: anyone may take the row (`unleased`);
 * - **take**: a claim writes a new token and an expiry `ms` from now (`takeLease`), on rows it found
 *   unleased and locked (`for update skip locked`) or checks again in its update;
 * - **renew**: the holder (`heldBy`) moves the expiry on (`leaseUntil`);
 * - **settle**: only the current holder (`heldBy`: a result whose lease was lost, or taken over,
 *   moves nothing) writes the outcome and clears the lease (`CLEAR_LEASE`);
 * - **give up**: clearing the lease without an outcome (`CLEAR_LEASE`; a stream's ends now, `endLeaseNow`):
 *   a row still pending is due again at once; a holder that dies gives up by its expiry passing.
 * The lease columns are not indexed, so taking, renewing and clearing a lease are HOT updates.
 */

/** A leased table's two lease columns. */
export interface LeaseColumns {
  /** The holder's token (uuid): who holds the row now. */
  readonly token: string;
  /** Until when (the database's time): past it, the row is unleased. */
  readonly expiresAt: string;
}

/** A queued row's lease: deliveries (the dispatcher's and the listeners') and the operator's notices. */
export const ROW_LEASE: LeaseColumns = { token: "lease_token", expiresAt: "lease_expires_at" };

/** A local listener's stream lease on its endpoint: one `platter listen` connected, renewing it while it streams. */
export const STREAM_LEASE: LeaseColumns = { token: "listener_stream", expiresAt: "listening_until" };

/** SQL: row `alias` is held by nobody (never leased, given up, or its holder's lease ran out). */
export const unleased = (alias: string, lease: LeaseColumns = ROW_LEASE): string =>
  `(${alias}.${lease.expiresAt} is null or ${alias}.${lease.expiresAt} < now())`;

/** SQL: row `alias` is held now (the complement of `unleased`). */
export const leased = (alias: string, lease: LeaseColumns = ROW_LEASE): string => `${alias}.${lease.expiresAt} >= now()`;

/** SET clause taking a lease: a new token, expiring the SQL expression `ms` milliseconds from the database's now. */
export const takeLease = (ms: string, lease: LeaseColumns = ROW_LEASE): string =>
  `${lease.token} = gen_random_uuid(), ${lease.expiresAt} = ${leaseUntil(ms)}`;

/** `takeLease` for `ms` as a bound parameter (for `OrgSql` statements). */
export const takeLeaseFor = (ms: number, lease: LeaseColumns = ROW_LEASE): Statement => ({ text: takeLease("?::bigint", lease), values: [ms] });

/** SQL: a lease's expiry, the SQL expression `ms` milliseconds from the database's now (taking one, or renewing it: put with `heldBy`). */
export const leaseUntil = (ms: string): string => nowPlusSql(ms);

/** `leaseUntil` for `ms` as a bound parameter (for `OrgSql` statements). */
export const leaseUntilFor = (ms: number): Statement => ({ text: leaseUntil("?::bigint"), values: [ms] });

/** SQL: row `alias` is held by the token the SQL expression `token` gives: only its current holder settles or renews it. */
export const heldBy = (alias: string, token: string, lease: LeaseColumns = ROW_LEASE): string => `${alias}.${lease.token} = ${token}`;

/** `heldBy` for `token` as a bound parameter (for `OrgSql` statements). */
export const heldByToken = (alias: string, token: string, lease: LeaseColumns = ROW_LEASE): Statement =>
  ({ text: heldBy(alias, "?::uuid", lease), values: [token] });

/** SET clause settling or giving up a row's lease: nobody holds it (a pending row is due again at once). */
export const CLEAR_LEASE = `${ROW_LEASE.token} = null, ${ROW_LEASE.expiresAt} = null`;

/**
 * SET clause ending a lease now, its expiry kept as when it ended (a listener's stream: retention
 * and the Developer area read how long ago it listened); the row is unleased from now on.
 */
export const endLeaseNow = (lease: LeaseColumns): string => `${lease.expiresAt} = now(), ${lease.token} = null`;
