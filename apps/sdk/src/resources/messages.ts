import { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { FeedMessage, ListPage, MessageFeedParams, WebhookEvent } from "../types.ts";

/** A feed message as the Developer area answers it, before its body is parsed. */
type FeedMessageAnswer = Omit<FeedMessage, "envelope">;

/** `since` as the feed takes it: UTC with milliseconds. */
const sinceText = (since: Date | string | undefined): string | undefined => {
  if (since === undefined) return undefined;
  if (since instanceof Date) {
    if (Number.isNaN(since.getTime())) throw new TypeError("messages.list: `since` is an invalid Date");
    return since.toISOString();
  }
  return since;
};

/**
 * `platter.messages`: the organization's webhook messages to pull (the Developer area's
 * `GET /cli/messages`), for a receiver that cannot take webhooks or was down past their retries.
 */
export class MessagesResource {
  readonly #transport: Transport | undefined;

  constructor(transport: Transport | undefined) {
    this.#transport = transport;
  }

  /**
   * The messages oldest first, every page: iterate with `for await`. Keep the last message's
   * `cursor` and pass it as `after` to read only what came since. The walk ends at the newest
   * message settled now; iterate again from the last cursor to read what came later.
   */
  list(params: MessageFeedParams = {}): PageList<FeedMessage> {
    const transport = this.#transport;
    if (transport === undefined) {
      throw new TypeError("Platter: `developerAreaUrl` is required for `messages`: the feed is served by the Developer area (https://…, its origin)");
    }
    const since = sinceText(params.since);
    const types = params.types === undefined || params.types.length === 0 ? undefined : params.types.join(",");
    return new PageList<FeedMessage>(async (cursor) => {
      const page = await transport.request<ListPage<FeedMessageAnswer>>({
        method: "GET", path: "/cli/messages", query: { limit: params.limit, cursor, since: cursor === undefined ? since : undefined, type: types },
      });
      return { ...page, data: page.data.map((message) => ({ ...message, envelope: message.body === null ? null : (JSON.parse(message.body) as WebhookEvent) })) };
    }, params.after);
  }
}
