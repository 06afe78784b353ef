import { databasePoolStats, databaseReadStats, type RequestRuntime } from "@platter/persistence";
import { spanClockNanos, type TraceExport } from "@platter/ops";
import { Exit, type Tracer } from "effect";
import type { Context, Middleware } from "koa";
import type { Logger } from "pino";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { peekScope } from "./middleware/authenticate.ts";
import type { RequestLogWriter } from "./request-log.ts";
import { keepRequestSpan } from "./request-span.ts";

/**
 * What an operator watches of the API: Prometheus metrics on the ops port, and one JSON log line
 * per request (method, route, status, duration, request id, organization and key id, never the key).
 */

export interface ApiObservability {
  readonly registry: Registry;
  /** Times and counts every request; logs it when `logRequests`. Goes right after the request id. */
  readonly middleware: Middleware;
}

/** The request's server span, kept on its context for the programs it runs (`keepRequestSpan`). */
const startRequestSpan = (ctx: Context, traces: TraceExport): Tracer.Span => {
  const span = traces.startSpan(ctx.method, "server", traces.placement(ctx.get("traceparent") || undefined));
  keepRequestSpan(ctx, span);
  return span;
};

/**
 * Ends a request's span with what OpenTelemetry's HTTP conventions name (method, route, status) and
 * the organization the key belongs to; named `{method} {route}` once the route is known.
 */
const endRequestSpan = (span: Tracer.Span, method: string, route: string, status: number, organizationId: number | undefined): void => {
  // Like OpenTelemetry's `updateName`: the route is known only once the router has matched.
  (span as { name: string }).name = `${method} ${route}`;
  span.attribute("http.request.method", method);
  span.attribute("http.route", route);
  span.attribute("http.response.status_code", status);
  if (organizationId !== undefined) span.attribute("platter.organization.id", organizationId);
  // A 5xx is the server's error (the span's status says so); a 4xx is the caller's, as OpenTelemetry's conventions say.
  span.end(spanClockNanos(), status >= 500 ? Exit.fail(new Error(`answered ${status}`)) : Exit.void);
};

/** The text of an error body (`{"error": …}`), or null. */
const errorText = (body: unknown): string | null =>
  typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string" ? (body as { error: string }).error : null;

/** What the request log wrote and dropped (and why), for the operator. */
const addRequestLogMetrics = (registry: Registry, requestLog: RequestLogWriter): void => {
  new Counter({
    name: "platter_request_log_written_total",
    help: "Requests written to the organizations' request logs.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(requestLog.written);
    },
  });
  new Counter({
    name: "platter_request_log_dropped_total",
    help: "Kept requests not written: the buffer was full, their organization had used its share of a flush, the write failed (database unavailable), or the database refused the row itself.",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ reason: "full" }, requestLog.drops.full);
      this.inc({ reason: "organization_share" }, requestLog.drops.organizationShare);
      this.inc({ reason: "failed" }, requestLog.drops.failed);
      this.inc({ reason: "refused" }, requestLog.drops.refused);
    },
  });
};

/**
 * Where GETs' reads went with read replicas configured (nothing is reported without them): reads
 * per pool, each replica's lag as this process last measured it and whether it takes reads, and
 * the reads that fell back to the primary, by why.
 */
const addReadMetrics = (registry: Registry, runtime: RequestRuntime): void => {
  const stats = () => runtime.runPromise(databaseReadStats);
  new Counter({
    name: "platter_database_reads_total",
    help: "Read statements of GET requests, by the pool that served them: primary, or a replica (host:port/database).",
    labelNames: ["pool"],
    registers: [registry],
    async collect() {
      const now = await stats();
      this.reset();
      if (now === undefined) return;
      this.inc({ pool: "primary" }, now.primaryReads);
      for (const replica of now.replicas) this.inc({ pool: replica.name }, replica.reads);
    },
  });
  new Gauge({
    name: "platter_database_replica_lag_seconds",
    help: "How far each replica was behind the primary at its last check (absent while it does not answer).",
    labelNames: ["replica"],
    registers: [registry],
    async collect() {
      const now = await stats();
      this.reset();
      for (const replica of now?.replicas ?? []) if (replica.lagMs !== undefined) this.set({ replica: replica.name }, replica.lagMs / 1000);
    },
  });
  new Gauge({
    name: "platter_database_replica_current",
    help: "1 while a replica takes reads (within DATABASE_REPLICA_MAX_LAG), 0 while it is lagging, unavailable or not a standby.",
    labelNames: ["replica"],
    registers: [registry],
    async collect() {
      const now = await stats();
      this.reset();
      for (const replica of now?.replicas ?? []) this.set({ replica: replica.name }, replica.condition === "current" ? 1 : 0);
    },
  });
  new Counter({
    name: "platter_database_replica_fallbacks_total",
    help: "Reads that could have gone to a replica and ran on the primary: every replica lagging, every replica unavailable, or the replica failed the read.",
    labelNames: ["reason"],
    registers: [registry],
    async collect() {
      const now = await stats();
      this.reset();
      if (now === undefined) return;
      for (const [reason, count] of Object.entries(now.fallbacks)) this.inc({ reason }, count);
    },
  });
};

/**
 * The API's metrics and request logging; with `requestLog`, each authenticated request it keeps
 * (every failure, a sample of successes) is handed to the organization's request log.
 */
export const createApiObservability = (
  runtime: RequestRuntime, logger: Logger, logRequests: boolean, requestLog?: RequestLogWriter, traces?: TraceExport,
): ApiObservability => {
  const registry = new Registry();
  const duration = new Histogram({
    name: "platter_http_request_duration_seconds",
    help: "Time from a request's arrival to its response, by method, route (the endpoint's pattern) and status.",
    labelNames: ["method", "route", "status"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const inFlight = new Gauge({ name: "platter_http_requests_in_flight", help: "Requests being answered now.", registers: [registry] });
  const rateLimited = new Counter({
    name: "platter_http_rate_limited_total", help: "Requests refused with 429 (a key over its rate limit).", registers: [registry],
  });
  const unavailable = new Counter({
    name: "platter_http_database_unavailable_total",
    help: "Requests answered 503 because the database was down, frozen or too slow.",
    registers: [registry],
  });
  new Gauge({
    name: "platter_database_pool_connections",
    help: "This process's database pool: connections open, idle, and callers waiting for one.",
    labelNames: ["state"],
    registers: [registry],
    async collect() {
      const stats = await runtime.runPromise(databasePoolStats);
      this.set({ state: "open" }, stats.open);
      this.set({ state: "idle" }, stats.idle);
      this.set({ state: "waiting" }, stats.waiting);
    },
  });
  addReadMetrics(registry, runtime);
  if (requestLog !== undefined) addRequestLogMetrics(registry, requestLog);
  rateLimited.inc(0);
  unavailable.inc(0);

  const middleware: Middleware = async (ctx, next) => {
    const began = performance.now();
    const arrivedAt = Date.now();
    // A span per request only when traces are exported: under the caller's `traceparent` when it sends one.
    const span = traces === undefined ? undefined : startRequestSpan(ctx, traces);
    inFlight.inc();
    try {
      await next();
    } finally {
      inFlight.dec();
      const seconds = (performance.now() - began) / 1000;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      duration.observe({ method: ctx.method, route, status: String(ctx.status) }, seconds);
      if (ctx.status === 429) rateLimited.inc();
      if (ctx.status === 503) unavailable.inc();
      const scope = peekScope(ctx);
      if (requestLog !== undefined && scope !== undefined && requestLog.keeps(ctx.status)) {
        requestLog.add({
          organization_id: scope.organizationId, api_key_id: scope.apiKeyId, at: new Date(arrivedAt).toISOString(), method: ctx.method,
          route, status: ctx.status, duration_ms: Math.round(seconds * 10_000) / 10, request_id: String(ctx.state["requestId"]),
          error: ctx.status >= 400 ? errorText(ctx.body) : null,
        });
      }
      if (span !== undefined) endRequestSpan(span, ctx.method, route, ctx.status, scope?.organizationId);
      if (logRequests) {
        logger.info({
          method: ctx.method, route, status: ctx.status, durationMs: Math.round(seconds * 10_000) / 10,
          requestId: ctx.state["requestId"], organizationId: scope?.organizationId, keyId: scope?.apiKeyId,
        }, "request");
      }
    }
  };
  return { registry, middleware };
};
