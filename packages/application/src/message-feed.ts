import type { Actor, MessageFeedFilter, PageRequest } from "@platter/domain";
import { WebhookMessages } from "@platter/persistence";

/**
 * The message feed, as an actor (an integrator's API key, `GET /cli/messages`) pulls it: the
 * organization's webhook messages oldest first, each with its envelope exactly as delivered, from a
 * cursor, a time or the oldest one retention kept. A read: nothing changes, nothing is audited.
 */
export const MessageFeed = {
  /** One page of the organization's messages after `page.after` (a message's key, or just before a time's first), filtered by type. */
  page: (actor: Actor, filter: MessageFeedFilter, page: PageRequest<readonly [string, number]>) =>
    WebhookMessages.use((messages) => messages.feed(actor.scope, filter, page)),
};
