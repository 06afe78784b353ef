import type { paths } from "../generated/api-types.ts";
import { PageList } from "../pagination.ts";
import type { Transport } from "../transport.ts";
import type { CreateOptions, Created, ListPage, ListParams } from "../types.ts";
import { randomUuid } from "../web-crypto.ts";

/** The two request shapes every resource shares: a paginated list and an idempotent create. */

/** A `PageList` over a list endpoint; `params.limit` is the page size, `params.cursor` where to start. */
export const listOf = <Item>(transport: Transport, path: keyof paths, params: ListParams = {}): PageList<Item> =>
  new PageList<Item>(
    (cursor) => transport.request<ListPage<Item>>({ method: "GET", path, query: { limit: params.limit, cursor } }),
    params.cursor,
  );

/** A create with an Idempotency-Key: the caller's, or a random one, so retries never create twice. */
export const createIn = async <Input>(transport: Transport, path: keyof paths, input: Input, options: CreateOptions = {}): Promise<Created> =>
  transport.request<Created>({ method: "POST", path, body: input, idempotencyKey: options.idempotencyKey ?? (await randomUuid()) });

/** The path of one record; the id is encoded, so a non-numeric one is a 404, never another path. */
export const recordPath = (collection: string, id: number): string => `${collection}/${encodeURIComponent(String(id))}`;
