import { ALERT_CONFIRMATION_LIFETIME_MS, type DatabaseUnavailable, generateAccessToken, hashAccessToken, InvalidInput, type NotFound, type OrgScope } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { nowPlus } from "../database-clock.ts";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, raw, sql } from "../org-sql.ts";

/** An address an organization alerts, as its Developer area lists it. */
export interface AlertRecipientView {
  readonly id: number;
  readonly email: string;
  /** When it was confirmed (ISO 8601); null while its link waits to be opened. */
  readonly confirmed_at: string | null;
  /** Until when its confirmation link may be used; null once confirmed. */
  readonly confirmation_expires_at: string | null;
  /** Whether its link expired unconfirmed (on the database's clock): it stays listed, and counted, until removed. */
  readonly link_expired: boolean;
  readonly created_at: string;
}

const VIEW_COLUMNS = `r.id::int as id, r.email, ${isoTimestamp("r.confirmed_at")} as confirmed_at,
  ${isoTimestamp("r.confirmation_expires_at")} as confirmation_expires_at,
  coalesce(r.confirmed_at is null and r.confirmation_expires_at <= now(), false) as link_expired, ${isoTimestamp("r.created_at")} as created_at`;

/**
 * The addresses an organization alerts by e-mail (`alert_recipients`): inserted with a confirmation
 * token's hash (the token is returned once, for the link mailed to the address), confirmed by that
 * token only, listed and removed through the organization's scope. It decides nothing: the cap is
 * the caller's (`AlertRecipients.add` in the application).
 */
export class AlertRecipientStore extends Context.Service<
  AlertRecipientStore,
  {
    /**
     * The organization's addresses (confirmed or not), with its row locked until the transaction
     * ends, so two adds take turns and cannot both take the last place under the cap.
     */
    readonly lockForAdding: (scope: OrgScope) => Effect.Effect<number, DatabaseUnavailable>;
    /**
     * Inserts `email` (already parsed by `parseAlertEmail`) waiting for confirmation, its link valid
     * `ALERT_CONFIRMATION_LIFETIME_MS`; returns its id and the token (this once). `InvalidInput` when
     * the organization already lists it.
     */
    readonly add: (scope: OrgScope, email: string) => Effect.Effect<{ readonly id: number; readonly token: string }, InvalidInput | DatabaseUnavailable>;
    /** The organization's addresses, oldest first. */
    readonly list: (scope: OrgScope) => Effect.Effect<ReadonlyArray<AlertRecipientView>, DatabaseUnavailable>;
    /** Removes one of the organization's addresses (its mails not yet sent go with it); `NotFound` for another organization's. */
    readonly remove: (scope: OrgScope, id: number) => Effect.Effect<{ readonly id: number; readonly email: string }, NotFound | DatabaseUnavailable>;
    /**
     * Confirms the address whose link carries `token`, if it is unexpired and unused: found by the
     * token's hash alone (whoever opens the link has no session), so it needs no scope. Returns the
     * address, or undefined for a token that is unknown, used or expired.
     */
    readonly confirm: (token: string) => Effect.Effect<{ readonly id: number; readonly email: string } | undefined, DatabaseUnavailable>;
  }
>()("platter/persistence/AlertRecipientStore") {
  static readonly layer = Layer.effect(
    AlertRecipientStore,
    Effect.gen(function* () {
      const database = yield* Database;
      return AlertRecipientStore.of({
        lockForAdding: Effect.fnUntraced(function* (scope: OrgScope) {
          const tx = orgSql(database, scope);
          yield* tx.select({ columns: "o.id", from: "organizations", as: "o", rest: sql`for no key update` });
          const [count] = yield* tx.select<{ n: number }>({ columns: "count(*)::int as n", from: "alert_recipients", as: "r" });
          return count?.n ?? 0;
        }),
        add: Effect.fnUntraced(function* (scope: OrgScope, email: string) {
          const tx = orgSql(database, scope);
          const taken = yield* tx.select({ columns: "r.id", from: "alert_recipients", as: "r", where: sql`r.email = ${email}` });
          if (taken.length > 0) return yield* Effect.fail(new InvalidInput({ message: "This address is already listed" }));
          const { token, hash } = generateAccessToken();
          yield* tx.insertFrom({
            into: "alert_recipients",
            columns: "email, confirmation_hash, confirmation_expires_at",
            values: sql`${email}, ${hash}, ${raw(nowPlus(ALERT_CONFIRMATION_LIFETIME_MS))}`,
            from: "organizations",
            as: "o",
          });
          const row = yield* tx.one<{ id: number }>({ columns: "r.id::int as id", from: "alert_recipients", as: "r", where: sql`r.email = ${email}` })
            .pipe(Effect.orDie);
          return { id: row.id, token };
        }),
        list: (scope: OrgScope) =>
          orgSql(database, scope).select<AlertRecipientView>({ columns: VIEW_COLUMNS, from: "alert_recipients", as: "r", rest: sql`order by r.id` }),
        remove: Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const org = orgSql(database, scope);
          const found = yield* org.one<{ email: string }>({ columns: "r.email", from: "alert_recipients", as: "r", where: sql`r.id = ${id}` });
          yield* org.delete("alert_recipients", "r", sql`r.id = ${id}`);
          return { id, email: found.email };
        }),
        confirm: Effect.fnUntraced(function* (token: string) {
          const [row] = yield* database.rows<{ id: number; email: string }>(
            `update alert_recipients r set confirmed_at = now(), confirmation_hash = null, confirmation_expires_at = null
             where r.confirmation_hash = ? and r.confirmation_expires_at > now() returning r.id::int as id, r.email`,
            [hashAccessToken(token)],
          );
          return row;
        }),
      });
    }),
  );
}
