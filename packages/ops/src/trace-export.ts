import { type TraceParent, parseTraceparent } from "@platter/domain";
import { ConfigProvider, Context, Effect, Exit, Layer, Option, Scope, Tracer } from "effect";
import { FetchHttpClient, HttpClient } from "effect/http";
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability";
import type { TraceSettings } from "./config.ts";

/**
 * Traces exported over OTLP/HTTP through effect's own exporter (`effect/observability`), when the
 * operator sets OTEL_EXPORTER_OTLP_ENDPOINT (`readTraceSettings`). The export is buffered and
 * bounded: spans are sent in batches every OTEL_BSP_SCHEDULE_DELAY; one request waits at most
 * OTEL_EXPORTER_OTLP_TIMEOUT; at most `MAX_EXPORTS_IN_FLIGHT` requests are out at once, and a
 * failed export (the receiver down, slow or refusing) drops its batch and pauses the export for a
 * minute (effect's exporter), so a receiver never slows or fails a request nor grows the memory.
 */

/** Export requests out at once at most; one more batch while they are is dropped. */
const MAX_EXPORTS_IN_FLIGHT = 4;

/** A process's trace export: its tracer, the sampling of new traces, and its end. */
export interface TraceExport {
  /** The tracer every program of the process runs under (`PlatformSettings.tracer`). */
  readonly tracer: Tracer.Tracer;
  /**
   * Where a new span of a request or a delivery attempt belongs: under `traceparent` (a request's
   * header, a message's stored context) when it reads as W3C Trace Context, else a new trace; and
   * whether it is recorded (the sampler, parent-based by default).
   */
  readonly placement: (traceparent: string | null | undefined) => SpanPlacement;
  /** Starts a span of `kind` now (its parent and sampling from `placement`); end it with `endSpan`. */
  readonly startSpan: (name: string, kind: Tracer.SpanKind, placement: SpanPlacement, startTime?: bigint) => Tracer.Span;
  /** Sends what is buffered (bounded by the export's timeout) and stops exporting. */
  readonly close: () => Promise<void>;
}

/** A new span's parent (none: a new trace) and whether it is recorded. */
export interface SpanPlacement {
  readonly parent: Tracer.AnySpan | undefined;
  readonly sampled: boolean;
}

/** The wall clock in nanoseconds since the epoch, as span times are written. */
export const spanClockNanos = (): bigint => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1_000)) * 1_000n;

/** Ends `span` now (or at `endTime`), successful. */
export const endSpan = (span: Tracer.Span, endTime: bigint = spanClockNanos()): void => span.end(endTime, Exit.void);

/** Whether a new trace is recorded: the sampler's root decision (a ratio draws per trace). */
const rootSampled = (settings: TraceSettings): boolean => {
  if (settings.sampler === "always_off" || settings.sampler === "parentbased_always_off") return false;
  if (settings.sampler.endsWith("traceidratio")) return Math.random() < settings.samplerRatio;
  return true;
};

/** The sampler's decision for a span under `parent`: a parent-based sampler follows its `sampled` flag. */
const placementOf = (settings: TraceSettings, parent: TraceParent | undefined): SpanPlacement => {
  if (parent === undefined) return { parent: undefined, sampled: rootSampled(settings) };
  const external = Tracer.externalSpan({ traceId: parent.traceId, spanId: parent.spanId, sampled: parent.sampled });
  return { parent: external, sampled: settings.sampler.startsWith("parentbased_") ? parent.sampled : rootSampled(settings) };
};

/** The HTTP client exports go through: each request bounded in time, and few at once (see the module's comment). */
const boundedClient = (timeoutMs: number) => {
  let inFlight = 0;
  return Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function* () {
      const client = yield* HttpClient.HttpClient;
      return client.pipe(HttpClient.transformResponse((response) =>
        Effect.suspend(() => {
          if (inFlight >= MAX_EXPORTS_IN_FLIGHT) return Effect.die(new Error("trace export: too many requests in flight"));
          inFlight++;
          return response.pipe(Effect.timeout(timeoutMs), Effect.catchTag("TimeoutError", (timedOut) => Effect.die(timedOut)), Effect.ensuring(Effect.sync(() => inFlight--)));
        })));
    }),
  ).pipe(Layer.provide(FetchHttpClient.layer));
};

/** Starts exporting spans as `settings` say; `close()` flushes and stops. */
export const startTraceExport = async (settings: TraceSettings): Promise<TraceExport> => {
  const scope = Effect.runSync(Scope.make());
  const serialization = settings.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf;
  const tracer = await Effect.runPromise(
    OtlpTracer.make({
      url: settings.url,
      headers: settings.headers,
      resource: { serviceName: settings.serviceName, attributes: settings.resourceAttributes },
      exportInterval: settings.exportIntervalMs,
      maxBatchSize: settings.maxBatchSize,
      shutdownTimeout: settings.timeoutMs,
    }).pipe(
      Effect.provide(Layer.mergeAll(boundedClient(settings.timeoutMs), serialization, OtlpExporter.layerFlusher)),
      // Every setting comes from `readTraceSettings` (ops is the one home of configuration): nothing read from the environment here.
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown({})),
      Scope.provide(scope),
    ),
  );
  return {
    tracer,
    placement: (traceparent) => placementOf(settings, traceparent === null ? undefined : parseTraceparent(traceparent)),
    startSpan: (name, kind, placement, startTime = spanClockNanos()) =>
      tracer.span({
        name, parent: Option.fromNullishOr(placement.parent), annotations: Context.empty(), links: [], startTime, kind, root: placement.parent === undefined,
        sampled: placement.sampled,
      }),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  };
};

/** `startTraceExport` as a service of a process (`runUntilSignalled`): its stop flushes and ends the export. */
export const startTracesService = async (settings: TraceSettings): Promise<TraceExport & { readonly stop: () => Promise<void> }> => {
  const traces = await startTraceExport(settings);
  return { ...traces, stop: traces.close };
};
