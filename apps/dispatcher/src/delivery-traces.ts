import { type AttemptOutcome, type DeliveryStorage, type DueDelivery } from "@platter/domain";
import { spanClockNanos, type TraceExport } from "@platter/ops";
import { Effect, Exit } from "effect";

/**
 * The dispatcher's spans, made only when it exports traces: one per claim (how many it leased,
 * with its statements under it), one per batch of results written, and one per delivery attempt,
 * a child of the trace its message was created in (the creating request's `traceparent`, stored on
 * the message), so one trace shows a create and each delivery of it. Nothing is added to what
 * receivers get: no `traceparent` header goes out with a webhook.
 */

/** `store` with its claims and result writes in spans of their own, under the export's tracer (their statements' spans beneath). */
export const tracedDeliveryStorage = (store: DeliveryStorage, traces: TraceExport): DeliveryStorage => ({
  claimDue: (limit, leaseMs, policy, held) =>
    store.claimDue(limit, leaseMs, policy, held).pipe(
      Effect.tap((claimed) => Effect.annotateCurrentSpan({
        "platter.claim.limit": limit, "platter.claim.leased": claimed.due.length + claimed.unreadable.length + (claimed.unopened ?? 0),
      })),
      Effect.withSpan("webhook claim", { root: true, sampled: traces.placement(undefined).sampled }, { captureStackTrace: false }),
      Effect.withTracer(traces.tracer),
    ),
  recordAttempts: (records, policy) =>
    store.recordAttempts(records, policy).pipe(
      Effect.withSpan("webhook record", {
        root: true, sampled: traces.placement(undefined).sampled, attributes: { "platter.record.attempts": records.length },
      }, { captureStackTrace: false }),
      Effect.withTracer(traces.tracer),
    ),
  nextDueInMs: (policy) => store.nextDueInMs(policy),
});

/**
 * The span of one attempt that just ended (it took `durationMs`): a client span under the message's
 * trace (a new trace for a message written untraced), with the endpoint, the delivery, the attempt's
 * number, its outcome and duration, and the receiver's status code when it answered.
 */
export const recordAttemptSpan = (
  traces: TraceExport, outcome: AttemptOutcome, durationMs: number, delivery: DueDelivery, statusCode: number | undefined,
): void => {
  const end = spanClockNanos();
  const span = traces.startSpan("webhook attempt", "client", traces.placement(delivery.traceparent), end - BigInt(Math.round(durationMs * 1_000_000)));
  span.attribute("http.request.method", "POST");
  span.attribute("platter.organization.id", delivery.organizationId);
  span.attribute("platter.endpoint.id", delivery.endpointId);
  span.attribute("platter.delivery.id", delivery.id);
  span.attribute("platter.attempt.number", delivery.attempt);
  span.attribute("platter.attempt.outcome", outcome);
  span.attribute("platter.attempt.duration_ms", Math.round(durationMs * 10) / 10);
  if (statusCode !== undefined) span.attribute("http.response.status_code", statusCode);
  span.end(end, outcome === "succeeded" ? Exit.void : Exit.fail(new Error(`attempt ${outcome}`)));
};
