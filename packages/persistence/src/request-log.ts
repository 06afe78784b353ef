import {
  ERROR_TEXT_MAX_CHARACTERS, type ListPage, type OrgScope, type PageRequest, type RequestLogEntry, type RequestLogFilter, type RequestLogRecord,
  requestLogListing, storableTextOrNull, type DatabaseUnavailable,
} from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "./database.ts";
import { isoTimestamp, readKeysetPage } from "./keyset-page.ts";
import { orgSql, type Statement, sql } from "./org-sql.ts";

/**
 * The request log's storage: the API appends batches of many organizations' requests in one
 * statement (off the request path) and each organization reads its own through its scope. The
 * table is partitioned by `at` (`REQUEST_HISTORY`): requests older than the retention go with their
 * partition (`HistoryPartitions.forgetExpired`, the API's hourly turn), never row by row.
 */

const COLUMNS = `r.id, ${isoTimestamp("r.at")} as at, r.method, r.route, r.status, r.duration_ms, r.api_key_id, r.request_id, r.error`;
type Row = Omit<RequestLogEntry, "id" | "api_key_id"> & { id: string; api_key_id: string };

const STATUS_RANGES = { "2xx": [200, 300], "4xx": [400, 500], "5xx": [500, 600] } as const;

/**
 * The filter's conditions; with the time range and the cursor's key (`readKeysetPage`) each narrows
 * the organization's `(organization_id, at desc, id desc)` range, or its request id.
 */
const filterConditions = (filter: RequestLogFilter): ReadonlyArray<Statement> => [
  ...(filter.keyId === undefined ? [] : [sql`r.api_key_id = ${filter.keyId}`]),
  ...(filter.statusClass === undefined
    ? []
    : [sql`r.status >= ${STATUS_RANGES[filter.statusClass][0]} and r.status < ${STATUS_RANGES[filter.statusClass][1]}`]),
  ...(filter.route === undefined ? [] : [sql`r.route = ${filter.route}`]),
  ...(filter.requestId === undefined ? [] : [sql`r.request_id = ${filter.requestId}`]),
];

export class RequestLog extends Context.Service<
  RequestLog,
  {
    /**
     * Appends requests of any organizations in one statement, ids in the order given. Each row keeps the organization its
     * request's scope named, and is written only when its key belongs to that organization; its error text is
     * written storable and bounded (`storableText`). A row the database refuses (or no partition takes) fails the whole statement: the
     * API's writer splits such a batch.
     * Returns how many were written.
     */
    readonly append: (records: ReadonlyArray<RequestLogRecord>) => Effect.Effect<number, DatabaseUnavailable>;
    /** The organization's requests, newest first, filtered; a page at a time. */
    readonly list: (
      scope: OrgScope, filter: RequestLogFilter, page: PageRequest<readonly [string, number]>,
    ) => Effect.Effect<ListPage<RequestLogEntry>, DatabaseUnavailable>;
  }
>()("platter/persistence/RequestLog") {
  static readonly layer = Layer.effect(
    RequestLog,
    Effect.gen(function* () {
      const database = yield* Database;
      return RequestLog.of({
        append: (records: ReadonlyArray<RequestLogRecord>) => {
          if (records.length === 0) return Effect.succeed(0);
          const column = <K extends keyof RequestLogRecord>(key: K) => records.map((record) => record[key]);
          return Effect.map(
            database.rows<{ n: number }>(
              `with written as (
                 insert into api_requests (organization_id, api_key_id, at, method, route, status, duration_ms, request_id, error)
                 select r.organization_id, r.api_key_id, r.at, r.method, r.route, r.status, r.duration_ms, r.request_id, r.error
                 from unnest(?::bigint[], ?::bigint[], ?::timestamptz[], ?::text[], ?::text[], ?::int[], ?::float8[], ?::text[], ?::text[])
                   with ordinality as r(organization_id, api_key_id, at, method, route, status, duration_ms, request_id, error, position)
                 join api_keys k on k.id = r.api_key_id and k.organization_id = r.organization_id
                 order by r.position
                 returning 1
               ) select count(*)::int as n from written`,
              [
                column("organization_id"), column("api_key_id"), column("at"), column("method"), column("route"), column("status"),
                // The writer bounds every text already; the store holds to it whoever calls it (a NUL would refuse the batch).
                column("duration_ms"), column("request_id"), records.map((record) => storableTextOrNull(record.error, ERROR_TEXT_MAX_CHARACTERS)),
              ],
            ),
            ([row]) => row?.n ?? 0,
          );
        },
        list: (scope: OrgScope, filter: RequestLogFilter, page: PageRequest<readonly [string, number]>) =>
          readKeysetPage(
            orgSql(database, scope),
            requestLogListing,
            {
              columns: COLUMNS, from: "api_requests", as: "r", keyColumns: ["r.at", "r.id"], keyCasts: ["timestamptz", "bigint"],
              filter: filterConditions(filter), range: { from: filter.from, to: filter.to },
            },
            page,
            (row: Row): RequestLogEntry => ({ ...row, id: Number(row.id), api_key_id: Number(row.api_key_id) }),
          ),
      });
    }),
  );
}
