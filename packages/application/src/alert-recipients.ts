import { type Actor, alertRecipientLimitReached, DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION, parseAlertEmail } from "@platter/domain";
import { AlertRecipientStore } from "@platter/persistence";
import { Effect } from "effect";
import { audited } from "./audited.ts";

/** A new address waiting for confirmation, unless the organization already lists `limit` (decided under its row's lock). */
const addWithin = (actor: Actor, email: string, limit: number) =>
  AlertRecipientStore.use((store) =>
    Effect.gen(function* () {
      if ((yield* store.lockForAdding(actor.scope)) >= limit) return yield* alertRecipientLimitReached(limit);
      return { ...(yield* store.add(actor.scope, email)), email };
    }));

/**
 * The e-mail addresses an organization alerts when its endpoints fail, are about to be disabled, are
 * disabled or recover. An address is mailed nothing but its confirmation link until that link is
 * opened, so nobody is signed up by someone else.
 */
export const AlertRecipients = {
  /** The organization's addresses, oldest first, confirmed or waiting. */
  list: (actor: Actor) => AlertRecipientStore.use((store) => store.list(actor.scope)),
  /**
   * Adds `raw` (checked with `parseAlertEmail`: `InvalidInput`) waiting for confirmation, audited
   * `alert_recipient.added`; returns the token of its confirmation link, for the caller to mail once.
   * `AlertRecipientLimitReached` (nothing written) when the organization already lists `limit`
   * (`ALERT_RECIPIENTS_PER_ORGANIZATION`), `InvalidInput` when it lists this address already.
   */
  add: (actor: Actor, raw: string, limit = DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION) =>
    Effect.gen(function* () {
      const email = yield* Effect.fromResult(parseAlertEmail(raw));
      return yield* audited(actor, addWithin(actor, email, limit), (added) => ({
        action: "alert_recipient.added",
        subject: `alert_recipient ${added.id}`,
      }));
    }),
  /** Removes one of the organization's addresses (no mail goes to it from now on), audited `alert_recipient.removed`. */
  remove: (actor: Actor, id: number) =>
    audited(actor, AlertRecipientStore.use((store) => store.remove(actor.scope, id)), () => ({
      action: "alert_recipient.removed",
      subject: `alert_recipient ${id}`,
    })),
  /**
   * Confirms the address whose link carries `token` (no session: the link is the proof that its
   * owner wants the alerts); undefined for a token unknown, used or past its 24 hours.
   */
  confirm: (token: string) => AlertRecipientStore.use((store) => store.confirm(token)),
};
