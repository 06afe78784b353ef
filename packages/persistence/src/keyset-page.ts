import { assemblePage, type Listing, type ListPage, type PageRequest, type SortKey, type DatabaseUnavailable } from "@platter/domain";
import { Effect } from "effect";
import { allOf, type Join, type OrgSql, type OrgTable, raw, type Select, type Statement, sql } from "./org-sql.ts";

/**
 * Every paged list of Platter (the API's lists, the Developer area's delivery, request and audit
 * logs, the CLI's delivery list) is read here: one index range of the organization's rows, in the
 * order and from the cursor key the domain's `Listing` names, filtered within that range.
 */

/**
 * How a keyset list is read: the scoped table (and its joins), its columns, the SQL expressions of
 * the listing's sort key, and the list's filter. The listing's order must be the order of an index
 * on `(organization_id, ...keyColumns)` (or of a filter's narrower one) for a page to stay one
 * index range scan.
 */
export interface KeysetQuery {
  readonly columns: string;
  readonly from: OrgTable;
  readonly as: string;
  /** Rows joined to each listed row (confined to the scope by OrgSql). */
  readonly joins?: ReadonlyArray<Join>;
  /** Sort-key columns, most significant first, with the casts their cursor values need. */
  readonly keyColumns: readonly [string, string];
  readonly keyCasts: readonly [string, string];
  /** The filter's conditions (a status, an endpoint, a key…), each bound by the `sql` template. */
  readonly filter?: ReadonlyArray<Statement>;
  /** A range of the first key column (a time range): `from` included, `to` excluded, each cast as the key's. */
  readonly range?: { readonly from?: string | undefined; readonly to?: string | undefined };
}

/**
 * Reads one page of a listing: `limit + 1` rows strictly after the cursor's key, in the listing's
 * order (ascending or descending, as the listing says), within the query's filter and range. The
 * row-value comparison keeps it one index range scan. Rows are read as objects, or with
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
): Effect.Effect<ListPage<Row>, DatabaseUnavailable> => {
  const select = keysetSelect(listing, query, page);
  const rows = as === "values" ? (org.selectValues(select) as Effect.Effect<DbRow[]>) : org.select<DbRow>(select);
  return Effect.map(rows, (read) => assemblePage(listing, read.map(toRow), page.limit));
};

/**
 * The first `limit` rows of a listing (the newest, for a newest-first one), for a list shown
 * without paging (the CLI's `deliveries list`): the first page of `readKeysetPage`.
 */
export const readFirstRows = <DbRow, Row, Key extends SortKey>(
  org: OrgSql,
  listing: Listing<Row, Key>,
  query: KeysetQuery,
  limit: number,
  toRow: (row: DbRow) => Row,
): Effect.Effect<ReadonlyArray<Row>, DatabaseUnavailable> =>
  Effect.map(readKeysetPage(org, listing, query, { limit, after: undefined }, toRow), (page) => page.data);

/** The select of one page: `limit + 1` rows strictly after the cursor's key, in the listing's order, filtered. */
const keysetSelect = <Row, Key extends SortKey>(listing: Listing<Row, Key>, query: KeysetQuery, page: PageRequest<Key>): Select => {
  const [first, second] = query.keyColumns;
  const [firstCast, secondCast] = query.keyCasts;
  const direction = listing.direction === "asc" ? "asc" : "desc";
  const { from, to } = query.range ?? {};
  const where = allOf([
    ...(query.filter ?? []),
    ...(from === undefined ? [] : [sql`${raw(first)} >= ${from}::${raw(firstCast)}`]),
    ...(to === undefined ? [] : [sql`${raw(first)} < ${to}::${raw(firstCast)}`]),
    ...(page.after === undefined
      ? []
      : [
        sql`(${raw(`${first}, ${second}`)}) ${raw(direction === "asc" ? ">" : "<")} (${page.after[0]}::${raw(firstCast)}, ${page.after[1]}::${raw(secondCast)})`,
        // The same bound on the first column alone (a row comparison prunes no partition): a table partitioned by it
        // reads no partition past the cursor.
        sql`${raw(first)} ${raw(direction === "asc" ? ">=" : "<=")} ${page.after[0]}::${raw(firstCast)}`,
      ]),
  ]);
  return {
    columns: query.columns,
    from: query.from,
    as: query.as,
    ...(query.joins === undefined ? {} : { joins: query.joins }),
    ...(where === undefined ? {} : { where }),
    rest: sql`order by ${raw(`${first} ${direction}, ${second} ${direction}`)} limit ${page.limit + 1}`,
  };
};

/** The API's timestamp format: UTC with milliseconds, computed in SQL so it is exact. */
export const isoTimestamp = (column: string): string =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
