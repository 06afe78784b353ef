import { NotFound } from "@platter/domain";
import { Effect } from "effect";
import type { Orm } from "../database.ts";
import { isoTimestamp } from "../scoped-sql.ts";

/** Deliveries as operators inspect them, with every attempt; and sending failed ones again. */

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface DeliveryFilter {
  readonly organizationId: number;
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

export const listDeliveries = (orm: Orm, filter: DeliveryFilter) =>
  Effect.promise(async () => {
    const rows = await orm.em.getConnection().execute<(DeliveryView & { id: string; endpoint_id: string })[]>(
      `select d.id, d.endpoint_id, d.envelope_id, d.event_type, d.status,
         case when d.status = 'pending' then ${isoTimestamp("d.next_attempt_at")} end as next_attempt_at,
         ${isoTimestamp("d.created_at")} as created_at,
         coalesce((select json_agg(json_build_object('attempt', a.attempt,
             'started_at', ${isoTimestamp("a.started_at")}, 'duration_ms', a.duration_ms,
             'status_code', a.status_code, 'error', a.error, 'response_body', a.response_body,
             'next_attempt_at', ${isoTimestamp("a.next_attempt_at")}) order by a.id)
           from webhook_attempts a where a.delivery_id = d.id), '[]') as attempts
       from webhook_deliveries d
       where d.organization_id = ? and (?::text is null or d.status = ?) and (?::bigint is null or d.endpoint_id = ?)
       order by d.id desc limit ?`,
      [
        filter.organizationId, filter.status ?? null, filter.status ?? null, filter.endpointId ?? null,
        filter.endpointId ?? null, filter.limit ?? 100,
      ],
    );
    return rows.map((row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) }));
  });

/** Makes a finished delivery due again now, with the same envelope and bytes; its attempts are kept. */
export const retryDelivery = (orm: Orm, deliveryId: number) =>
  Effect.flatMap(
    Effect.promise(() =>
      orm.em.getConnection().execute<{ id: string }[]>(
        `update webhook_deliveries set status = 'pending', next_attempt_at = now(), completed_at = null,
           lease_token = null, lease_expires_at = null
         where id = ? and status <> 'pending' returning id`,
        [deliveryId],
      ),
    ),
    (rows) => (rows.length === 0 ? Effect.fail(new NotFound()) : Effect.succeed({ retried: 1 })),
  );

/** Makes every failed delivery of an endpoint due again now. */
export const retryFailedDeliveries = (orm: Orm, endpointId: number) =>
  Effect.flatMap(
    Effect.promise(() =>
      orm.em.getConnection().execute<{ endpoint_found: boolean; retried: string }[]>(
        `with retried as (
           update webhook_deliveries set status = 'pending', next_attempt_at = now(), completed_at = null
           where endpoint_id = ? and status = 'failed' returning id
         )
         select exists (select 1 from webhook_endpoints where id = ?) as endpoint_found,
           (select count(*) from retried) as retried`,
        [endpointId, endpointId],
      ),
    ),
    ([row]) => (row?.endpoint_found ? Effect.succeed({ retried: Number(row.retried) }) : Effect.fail(new NotFound())),
  );
