import { NotFound, type OrgScope } from "@platter/domain";
import { Context, Effect, Layer } from "effect";
import { Database } from "../database.ts";
import { isoTimestamp } from "../keyset-page.ts";
import { orgSql, type Statement, sql } from "../org-sql.ts";
import { traced } from "../traced.ts";

/** An organization's deliveries as operators and developers inspect them, with every attempt; and sending them again. */

export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryFilter {
  readonly status?: DeliveryStatus;
  readonly endpointId?: number;
  readonly limit?: number;
}

export interface DeliveryView {
  readonly id: number;
  readonly endpoint_id: number;
  readonly envelope_id: string;
  readonly event_type: string;
  readonly status: DeliveryStatus;
  readonly attempts: Array<{
    attempt: number;
    started_at: string;
    duration_ms: number;
    status_code: number | null;
    error: string | null;
    response_body: string | null;
    next_attempt_at: string | null;
  }>;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
}

// Attempts come with their delivery (one round trip), within the delivery's organization; the
// envelope id and type are its message's.
const MESSAGE = "join webhook_messages m on m.id = d.message_id and m.organization_id = d.organization_id";
const COLUMNS = `d.id, d.endpoint_id, m.envelope_id, m.type as event_type, d.status,
  case when d.status = 'pending' then ${isoTimestamp("d.next_attempt_at")} end as next_attempt_at,
  ${isoTimestamp("d.created_at")} as created_at,
  coalesce((select json_agg(json_build_object('attempt', a.attempt,
      'started_at', ${isoTimestamp("a.started_at")}, 'duration_ms', a.duration_ms,
      'status_code', a.status_code, 'error', a.error, 'response_body', a.response_body,
      'next_attempt_at', ${isoTimestamp("a.next_attempt_at")}) order by a.id)
    from webhook_attempts a where a.delivery_id = d.id and a.organization_id = d.organization_id), '[]') as attempts`;

/** Due again now, with the same envelope and bytes; attempts made so far are kept. */
const DUE_AGAIN = sql`status = 'pending', next_attempt_at = now(), completed_at = null, lease_token = null`;

const conditions = (filter: DeliveryFilter): Statement | undefined => {
  const parts = [
    ...(filter.status === undefined ? [] : [sql`d.status = ${filter.status}`]),
    ...(filter.endpointId === undefined ? [] : [sql`d.endpoint_id = ${filter.endpointId}`]),
  ];
  return parts.reduce<Statement | undefined>((all, part) => (all === undefined ? part : sql`${all} and ${part}`), undefined);
};

export class DeliveryRepository extends Context.Service<
  DeliveryRepository,
  {
    /** Newest first. */
    readonly list: (scope: OrgScope, filter: DeliveryFilter) => Effect.Effect<ReadonlyArray<DeliveryView>>;
    /** Makes a finished delivery due again now; `NotFound` when there is none or it is still pending. */
    readonly retry: (scope: OrgScope, id: number) => Effect.Effect<{ readonly retried: number }, NotFound>;
    /** Makes every failed delivery of an endpoint due again now. */
    readonly retryFailed: (scope: OrgScope, endpointId: number) => Effect.Effect<{ readonly retried: number }, NotFound>;
  }
>()("platter/persistence/DeliveryRepository") {
  static readonly layer = Layer.effect(
    DeliveryRepository,
    Effect.gen(function* () {
      const database = yield* Database;
      return DeliveryRepository.of({
        list: traced("DeliveryRepository.list")(Effect.fnUntraced(function* (scope: OrgScope, filter: DeliveryFilter) {
          const where = conditions(filter);
          const rows = yield* orgSql(database, scope).select<DeliveryView & { id: string; endpoint_id: string }>({
            columns: COLUMNS,
            from: "webhook_deliveries",
            as: "d",
            join: MESSAGE,
            ...(where === undefined ? {} : { where }),
            rest: sql`order by d.id desc limit ${filter.limit ?? 100}`,
          });
          return rows.map((row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) }));
        })),
        retry: traced("DeliveryRepository.retry")(Effect.fnUntraced(function* (scope: OrgScope, id: number) {
          const rows = yield* orgSql(database, scope).update({
            table: "webhook_deliveries",
            as: "d",
            set: DUE_AGAIN,
            where: sql`d.id = ${id} and d.status <> 'pending'`,
            returning: "d.id",
          });
          if (rows.length === 0) return yield* new NotFound();
          return { retried: 1 };
        })),
        retryFailed: traced("DeliveryRepository.retryFailed")(Effect.fnUntraced(function* (scope: OrgScope, endpointId: number) {
          const org = orgSql(database, scope);
          yield* org.one({ columns: "w.id", from: "webhook_endpoints", as: "w", where: sql`w.id = ${endpointId}` });
          const rows = yield* org.update({
            table: "webhook_deliveries",
            as: "d",
            set: DUE_AGAIN,
            where: sql`d.endpoint_id = ${endpointId} and d.status = 'failed'`,
            returning: "d.id",
          });
          return { retried: rows.length };
        })),
      });
    }),
  );
}
