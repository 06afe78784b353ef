import { expect } from "vitest";
import type { ApiClient, ApiResponse } from "./api-harness.ts";

/** Reading list endpoints page by page, checking the envelope of every page on the way. */

/** Asserts the list envelope: exactly `data`, `has_more`, `next_cursor`; a cursor exactly when there is more. */
export const expectListEnvelope = (response: ApiResponse): void => {
  expect(response.status).toBe(200);
  expect(Object.keys(response.body).sort()).toEqual(["data", "has_more", "next_cursor"]);
  expect(Array.isArray(response.body.data)).toBe(true);
  expect(typeof response.body.has_more).toBe("boolean");
  if (response.body.has_more) {
    expect(typeof response.body.next_cursor).toBe("string");
    expect(response.body.next_cursor.length).toBeGreaterThan(0);
  } else {
    expect(response.body.next_cursor).toBeNull();
  }
};

/** Requests one page; `cursor` is passed back unchanged (URL-encoded only). */
export const listPage = async (api: ApiClient, path: string, key: string, query: { limit?: number | string; cursor?: string } = {}) => {
  const params = new URLSearchParams();
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  if (query.cursor !== undefined) params.set("cursor", query.cursor);
  const search = params.size > 0 ? `?${params}` : "";
  const response = await api.call("GET", path + search, { key });
  expectListEnvelope(response);
  return response;
};

export interface Walk {
  readonly rows: any[];
  readonly pages: number;
}

/**
 * Follows `next_cursor` until `has_more` is false, as the spec's paging procedure says.
 * `betweenPages` runs after each page that has a successor (to change data mid-walk).
 */
export const walkList = async (
  api: ApiClient,
  path: string,
  key: string,
  limit: number,
  betweenPages?: (page: number) => Promise<void>,
): Promise<Walk> => {
  const rows: any[] = [];
  let cursor: string | undefined;
  for (let pages = 1; pages <= 10_000; pages++) {
    const response = await listPage(api, path, key, cursor === undefined ? { limit } : { limit, cursor });
    expect(response.body.data.length).toBeLessThanOrEqual(limit);
    if (response.body.has_more) expect(response.body.data.length).toBe(limit);
    rows.push(...response.body.data);
    if (!response.body.has_more) return { rows, pages };
    cursor = response.body.next_cursor;
    await betweenPages?.(pages);
  }
  throw new Error(`${path} did not end within 10,000 pages`);
};

/** Asserts that every row comes strictly before the next one in the list's order (so no duplicates either). */
export const expectOrdered = (rows: ReadonlyArray<any>, precedes: (a: any, b: any) => boolean): void => {
  for (let i = 1; i < rows.length; i++) {
    if (!precedes(rows[i - 1], rows[i])) {
      expect.fail(`row ${i - 1} ${JSON.stringify(rows[i - 1])} should come before row ${i} ${JSON.stringify(rows[i])}`);
    }
  }
};
