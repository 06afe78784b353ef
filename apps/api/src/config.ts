import {
  ConfigError, type DatabaseSettings, type Environment, type ProcessSettings, type RateLimitSettings, readBoolean, readDatabaseSettings,
  readDuration, readInteger, readProcessSettings, readRateLimits, readReplicaReadSettings, readRequestHistorySettings, readTraceSettings, readTrustProxy,
  readWebhookHistorySettings, type ReplicaReadSettings, type TraceSettings, type TrustedProxies, type WebhookHistorySettings,
} from "@platter/ops";
import type { RequestLogSettings } from "./request-log.ts";

export { ConfigError };

/** API configuration: parsed and validated once at start into a typed object. */
export interface ApiConfig extends DatabaseSettings, ProcessSettings {
  /** Public port: the spec's endpoints and nothing else. */
  readonly port: number;
  /** Operations port: `/healthz` and `/readyz`. */
  readonly opsPort: number;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  readonly shutdownGraceMs: number;
  /** One JSON log line per request (info level). */
  readonly logRequests: boolean;
  /** Per-organization, per-key and per-address rate limits, shared out between the instances live. */
  readonly rateLimits: RateLimitSettings;
  /** Which proxies may tell the client's address in `X-Forwarded-For`. */
  readonly trustProxy: TrustedProxies;
  /** Longest one request waits on the database in all (its key lookup and its work); then 503. */
  readonly requestDatabaseTimeoutMs: number;
  /** Streaming replicas for GETs (`DATABASE_REPLICA_URLS`; none by default) and the read-your-writes window. */
  readonly replicas: ReplicaReadSettings;
  /** Always on: the API's statements run their generic plans (see `DatabaseConnection.genericPlans`). */
  readonly genericPlans: true;
  /** The organizations' request log: which successes are kept, and for how long (`REQUEST_HISTORY_*`). */
  readonly requestHistory: RequestLogSettings;
  /** Spans exported over OTLP (`OTEL_EXPORTER_OTLP_ENDPOINT` and the other `OTEL_*`); undefined: no tracer at all. */
  readonly traces?: TraceSettings | undefined;
  /** Webhook history's partitions (`WEBHOOK_RETENTION`, `WEBHOOK_HISTORY_PARTITION`): the API makes them ahead at its start and hourly. */
  readonly webhookHistory: WebhookHistorySettings;
}

/** Reads the API's environment variables; throws `ConfigError` naming the first bad one. */
export const loadApiConfig = (env: Environment = process.env): ApiConfig => ({
  ...readDatabaseSettings(env),
  ...readProcessSettings(env),
  port: readInteger(env, "PORT", 3000, 0, 65535),
  opsPort: readInteger(env, "OPS_PORT", 9464, 0, 65535),
  shutdownGraceMs: readInteger(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
  logRequests: readBoolean(env, "REQUEST_LOG", true),
  rateLimits: readRateLimits(env),
  trustProxy: readTrustProxy(env),
  requestDatabaseTimeoutMs: readDuration(env, "REQUEST_DATABASE_TIMEOUT", 4_000, 100),
  replicas: readReplicaReadSettings(env),
  requestHistory: readRequestHistorySettings(env),
  webhookHistory: readWebhookHistorySettings(env),
  genericPlans: true,
  traces: readTraceSettings(env, "platter-api"),
});
