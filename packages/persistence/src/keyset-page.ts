import { assemblePage, type Listing, type ListPage, type PageRequest, type SortKey } from "@platter/domain";
import { Effect } from "effect";
import { type OrgSql, type OrgTable, raw, type Select, sql } from "./org-sql.ts";

/** How a keyset list is read: the scoped table, its columns, and the SQL expressions of the listing's sort key. */
export interface KeysetQuery {
  readonly columns: string;
  readonly from: OrgTable;
  readonly as: string;
  /** Sort-key columns, most significant first, with the casts their cursor values need. */
  readonly keyColumns: readonly [string, string];
  readonly keyCasts: readonly [string, string];
}

/**
 * Reads one page of a listing: `limit + 1` rows strictly after the cursor's key, in the listing's
 * order. The row-value comparison keeps it one index range scan. Rows are read as objects, or with
 * `as: "values"` as the arrays of their column values mapped by position (`org.selectValues`), for
 * the lists whose rows are simple enough to map so (the API's hottest).
 */
export const readKeysetPage = <DbRow, Row, Key extends SortKey>(
  org: OrgSql,
  listing: Listing<Row, Key>,
  query: KeysetQuery,
  page: PageRequest<Key>,
  toRow: (row: DbRow) => Row,
  as: "objects" | "values" = "objects",
): Effect.Effect<ListPage<Row>> => {
  const select = keysetSelect(listing, query, page);
  const rows = as === "values" ? (org.selectValues(select) as Effect.Effect<DbRow[]>) : org.select<DbRow>(select);
  return Effect.map(rows, (read) => assemblePage(listing, read.map(toRow), page.limit));
};

/** The select of one page: `limit + 1` rows strictly after the cursor's key, in the listing's order. */
const keysetSelect = <Row, Key extends SortKey>(listing: Listing<Row, Key>, query: KeysetQuery, page: PageRequest<Key>): Select => {
  const [first, second] = query.keyColumns;
  const direction = listing.direction === "asc" ? "asc" : "desc";
  const after =
    page.after === undefined
      ? undefined
      : sql`(${raw(`${first}, ${second}`)}) ${raw(direction === "asc" ? ">" : "<")} (${page.after[0]}::${raw(query.keyCasts[0])}, ${page.after[1]}::${raw(query.keyCasts[1])})`;
  return {
    columns: query.columns,
    from: query.from,
    as: query.as,
    ...(after === undefined ? {} : { where: after }),
    rest: sql`order by ${raw(`${first} ${direction}, ${second} ${direction}`)} limit ${page.limit + 1}`,
  };
};

/** The API's timestamp format: UTC with milliseconds, computed in SQL so it is exact. */
export const isoTimestamp = (column: string): string =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
