import type { ListPage } from "./types.ts";

/**
 * Auto-pagination. `list()` returns a `PageList`: iterate it with `for await` to walk every
 * record of every page, or use `.pages()` and `.toArray()`. Nothing is fetched until you iterate,
 * and each iteration starts a fresh walk from the first page.
 */

/** Fetches one page: `cursor` is `undefined` for the first one. */
export type PageFetcher<Item> = (cursor: string | undefined) => Promise<ListPage<Item>>;

/** Every record of a list endpoint, fetched page by page as you iterate. Not a promise: iterate it. */
export class PageList<Item> implements AsyncIterable<Item> {
  readonly #fetchPage: PageFetcher<Item>;
  readonly #startCursor: string | undefined;

  constructor(fetchPage: PageFetcher<Item>, startCursor?: string) {
    this.#fetchPage = fetchPage;
    this.#startCursor = startCursor;
  }

  /** The pages, in order, until one says `has_more: false`. */
  async *pages(): AsyncGenerator<ListPage<Item>, void, undefined> {
    let cursor = this.#startCursor;
    for (;;) {
      const page = await this.#fetchPage(cursor);
      yield page;
      if (!page.has_more || page.next_cursor === null) return;
      cursor = page.next_cursor;
    }
  }

  /** The records of every page, in the endpoint's order. */
  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Collects the records into an array: all of them, or the first `max`. Stops fetching once it has enough. */
  async toArray(options: { readonly max?: number } = {}): Promise<Item[]> {
    const max = options.max ?? Number.POSITIVE_INFINITY;
    if (!(max === Number.POSITIVE_INFINITY || (Number.isInteger(max) && max >= 0))) {
      throw new TypeError("toArray: `max` must be a whole number ≥ 0");
    }
    const items: Item[] = [];
    if (max <= 0) return items;
    for await (const item of this) {
      items.push(item);
      if (items.length >= max) break;
    }
    return items;
  }
}
