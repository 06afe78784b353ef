import type { Actor, PageRequest, RequestLogFilter } from "@platter/domain";
import { RequestLog } from "@platter/persistence";

/** An organization's request log, as an actor reads it (the API writes it; nobody changes it). */
export const RequestLogs = {
  /** The organization's API requests, newest first, filtered; a page at a time. */
  list: (actor: Actor, filter: RequestLogFilter, page: PageRequest<readonly [string, number]>) =>
    RequestLog.use((log) => log.list(actor.scope, filter, page)),
};
