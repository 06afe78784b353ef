import { type CircuitState, circuitState, type DatabaseUnavailable } from "@platter/domain";
import { Effect } from "effect";
import { DISPATCHABLE, MADE_BY_NOW } from "./delivery-claim.ts";
import { leased } from "./lease.ts";

/** Metrics reads: the queue's depth and each endpoint's share of it, for the dispatcher's gauges. */

/** One endpoint's share of the queue, for the per-endpoint gauges. */
export interface EndpointQueueStats {
  readonly organizationId: number;
  readonly endpointId: number;
  /** Pending deliveries, in flight included. */
  readonly queueDepth: number;
  readonly inFlight: number;
  readonly circuit: CircuitState;
}
/**
 * Pending deliveries a dispatcher sends (in flight included). Made by now (`MADE_BY_NOW`), as the claim reads them: the
 * partitions made ahead, empty, are left out at the statement's start rather than probed each scrape.
 */
export const QUEUE_DEPTH = `select count(*) as n from webhook_deliveries d where ${DISPATCHABLE("d")} and ${MADE_BY_NOW("d")}`;

/** Per enabled endpoint with deliveries pending or a circuit not closed: depth, in flight, circuit times (deliveries made by now, as `QUEUE_DEPTH`). */
export const ENDPOINT_STATS = `select e.organization_id, e.id as endpoint_id, count(d.id)::int as depth,
    (count(d.id) filter (where ${leased("d")}))::int as in_flight,
    (extract(epoch from e.circuit_open_until) * 1000)::bigint as open_until_ms,
    (extract(epoch from now()) * 1000)::bigint as now_ms
  from webhook_endpoints e left join webhook_deliveries d
    on d.organization_id = e.organization_id and d.endpoint_id = e.id and ${DISPATCHABLE("d")} and ${MADE_BY_NOW("d")}
  where e.enabled
  group by e.id
  having count(d.id) > 0 or e.circuit_open_until is not null`;

/** The metrics reads over `rows` (the pool's raw statements: they span organizations). */
export const queueMetrics = (rows: <Row>(text: string, values?: ReadonlyArray<unknown>) => Effect.Effect<Row[], DatabaseUnavailable>) => ({
  queueDepth: Effect.fnUntraced(function* () {
    const [row] = yield* rows<{ n: string }>(QUEUE_DEPTH);
    return Number(row?.n ?? 0);
  }),
  endpointStats: Effect.fnUntraced(function* () {
    const found = yield* rows<{
      organization_id: string; endpoint_id: string; depth: number; in_flight: number; open_until_ms: string | null; now_ms: string;
    }>(ENDPOINT_STATS);
    return found.map((row): EndpointQueueStats => ({
      organizationId: Number(row.organization_id),
      endpointId: Number(row.endpoint_id),
      queueDepth: row.depth,
      inFlight: row.in_flight,
      circuit: circuitState(row.open_until_ms === null ? undefined : Number(row.open_until_ms), Number(row.now_ms)),
    }));
  }),
});
