import type { ApiKeyActor, MessageFeedFilter, PageRequest } from "@platter/domain";
import { WebhookMessages } from "@platter/persistence";
import { Effect } from "effect";
import { readWriteOnly } from "./local-forwarding.ts";

/**
 * The message feed, as an integrator's API key pulls it (`GET /cli/messages`): the organization's
 * webhook messages oldest first, each with its envelope exactly as delivered, from a cursor, a time
 * or the oldest one retention kept. A read: nothing changes, nothing is audited. A read-only key is
 * `Forbidden`, as for `platter listen`: the payloads carry what the read API does not show.
 */
export const MessageFeed = {
  /** One page of the organization's messages after `page.after` (a message's key, or just before a time's first), filtered by type. */
  page: (actor: ApiKeyActor, filter: MessageFeedFilter, page: PageRequest<readonly [string, number]>) =>
    Effect.andThen(readWriteOnly(actor), WebhookMessages.use((messages) => messages.feed(actor.scope, filter, page))),
};
