import { DEFAULT_DISABLE_NOTICE_MS, DEFAULT_RETRY_SCHEDULE_MS } from "@platter/domain";
import {
  ConfigError, type DatabaseSettings, type Environment, parseDurations, type ProcessSettings, readBoolean,
  readDatabaseSettings, readDeveloperAreaAddress, readDuration, readInteger, readMailServerSettings, readProcessSettings, readSignatureHeader,
  readTraceSettings, readWebhookHistorySettings, type MailServerSettings, type TraceSettings, type WebhookHistorySettings,
} from "@platter/ops";
import { isIP } from "node:net";
import { DEFAULT_DNS_SETTINGS, type DispatcherSettings, type DnsSettings } from "@platter/webhooks";

export { ConfigError };

/** Dispatcher configuration: parsed and validated once at start into a typed object. */
export interface DispatcherConfig extends DatabaseSettings, ProcessSettings, DispatcherSettings {
  /** Spans exported over OTLP (`OTEL_EXPORTER_OTLP_ENDPOINT` and the other `OTEL_*`); undefined: no tracer at all. */
  readonly traces?: TraceSettings | undefined;
  /** Operations port: `/healthz`, `/readyz`, `/metrics`. */
  readonly opsPort: number;
  /** How long messages, their deliveries and attempts are kept, from the message's creation (`WEBHOOK_RETENTION`). */
  readonly retentionMs: number;
  /** Webhook history's partitions: their width and how far ahead they are made (`WEBHOOK_HISTORY_PARTITION`). */
  readonly webhookHistory: WebhookHistorySettings;
  /** How often the history sweep runs: partitions made ahead, expiring deliveries settled, expired partitions dropped, notices and the rest removed. */
  readonly retentionSweepMs: number;
  /** `AUDIT_LOG_RETENTION`: how long audit-log rows are kept (the same sweep removes older ones). */
  readonly auditLogRetentionMs: number;
  /** `WEBHOOK_DNS_*`: how endpoints' host names are resolved. */
  readonly dns: DnsSettings;
  /** `OPERATOR_WEBHOOK_URL` and `OPERATOR_WEBHOOK_SECRET`: where operational webhooks go (unset: notices are shown in the Developer area only). */
  readonly operatorWebhook: OperatorWebhookSettings | undefined;
  /** `SMTP_URL` and `SMTP_FROM`: where alert e-mails to organizations' developers go (unset: none is sent, said once at start). */
  readonly mailServer: MailServerSettings | undefined;
  /** `DEVELOPER_AREA_PUBLIC_URL`: the alert e-mails' links to an endpoint's page start with it. */
  readonly developerAreaUrl: string;
}

/** The operator channel: its URL, its Standard Webhooks secret and its own slots (`OPERATOR_WEBHOOK_CONCURRENCY`). */
export interface OperatorWebhookSettings {
  readonly url: string;
  readonly secret: string;
  readonly concurrency: number;
}

/** `OPERATOR_WEBHOOK_*`: both or neither of URL and secret; an http(s) URL; a `whsec_` secret of at least 24 bytes of base64. */
const operatorWebhook = (env: Environment): OperatorWebhookSettings | undefined => {
  const url = env["OPERATOR_WEBHOOK_URL"]?.trim() || undefined;
  const secret = env["OPERATOR_WEBHOOK_SECRET"]?.trim() || undefined;
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined || secret === undefined) throw new ConfigError("OPERATOR_WEBHOOK_URL and OPERATOR_WEBHOOK_SECRET must be set together");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`OPERATOR_WEBHOOK_URL must be an http(s) URL, got "${url}"`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new ConfigError(`OPERATOR_WEBHOOK_URL must be an http(s) URL, got "${url}"`);
  const key = secret.startsWith("whsec_") ? secret.slice("whsec_".length) : "";
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(key) || Buffer.from(key, "base64").length < 24) {
    throw new ConfigError("OPERATOR_WEBHOOK_SECRET must be a Standard Webhooks secret: whsec_ and at least 24 random bytes in base64");
  }
  return { url, secret, concurrency: readInteger(env, "OPERATOR_WEBHOOK_CONCURRENCY", 4, 1, 64) };
};

const DAY_MS = 24 * 60 * 60 * 1000;

const retrySchedule = (env: Environment): ReadonlyArray<number> => {
  const raw = env["WEBHOOK_RETRY_SCHEDULE"]?.trim();
  if (!raw) return DEFAULT_RETRY_SCHEDULE_MS;
  const schedule = parseDurations(raw);
  if (schedule === undefined) throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be durations like 0s,5s,5m, got "${raw}"`);
  return schedule;
};

/** One DNS server: an IP address, optionally with a port (`127.0.0.1:5353`, `[::1]:5353`). */
const isDnsServer = (entry: string): boolean => {
  const withPort = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(entry);
  if (withPort === null) return isIP(entry) !== 0;
  const port = Number(withPort[3]);
  return port >= 1 && port <= 65535 && (withPort[1] === undefined ? isIP(withPort[2]!) === 4 : isIP(withPort[1]) === 6);
};

/**
 * `WEBHOOK_DNS_*`: how endpoints' host names are resolved (c-ares, off libuv's thread pool). The
 * lookup counts against its attempt's `WEBHOOK_TIMEOUT`, so its own timeout is at most that.
 */
const dnsSettings = (env: Environment, attemptTimeoutMs: number): DnsSettings => {
  const rawServers = env["WEBHOOK_DNS_SERVERS"]?.trim();
  const servers = rawServers ? rawServers.split(",").map((entry) => entry.trim()) : undefined;
  if (servers !== undefined && !servers.every(isDnsServer)) {
    throw new ConfigError(`WEBHOOK_DNS_SERVERS must be IP addresses, each optionally with a port (1.1.1.1,127.0.0.1:5353,[::1]:53), got "${rawServers}"`);
  }
  const timeoutMs = readDuration(env, "WEBHOOK_DNS_TIMEOUT", Math.min(DEFAULT_DNS_SETTINGS.timeoutMs, attemptTimeoutMs), 10);
  if (timeoutMs > attemptTimeoutMs) throw new ConfigError(`WEBHOOK_DNS_TIMEOUT must be at most WEBHOOK_TIMEOUT (${attemptTimeoutMs} ms)`);
  return {
    servers,
    timeoutMs,
    cacheSize: readInteger(env, "WEBHOOK_DNS_CACHE_SIZE", DEFAULT_DNS_SETTINGS.cacheSize, 1, 10_000_000),
    lookupsPerOrganization: readInteger(env, "WEBHOOK_DNS_LOOKUPS_PER_ORGANIZATION", DEFAULT_DNS_SETTINGS.lookupsPerOrganization, 1, 1_000),
  };
};

/** Reads the dispatcher's environment variables; throws `ConfigError` naming the first bad one. */
export const loadDispatcherConfig = (env: Environment = process.env): DispatcherConfig => {
  const timeoutMs = readDuration(env, "WEBHOOK_TIMEOUT", 15_000);
  // Longer than an attempt can take, so a live attempt is never claimed twice.
  const leaseMs = readDuration(env, "WEBHOOK_LEASE", timeoutMs + 30_000);
  if (leaseMs <= timeoutMs) throw new ConfigError(`WEBHOOK_LEASE must be longer than WEBHOOK_TIMEOUT (${timeoutMs} ms)`);
  const operator = operatorWebhook(env);
  return {
    ...readDatabaseSettings(env),
    ...readProcessSettings(env),
    opsPort: readInteger(env, "DISPATCHER_OPS_PORT", 9465, 0, 65535),
    retentionMs: readWebhookHistorySettings(env).retentionMs,
    webhookHistory: readWebhookHistorySettings(env),
    retentionSweepMs: readDuration(env, "WEBHOOK_RETENTION_SWEEP", 60_000),
    auditLogRetentionMs: readDuration(env, "AUDIT_LOG_RETENTION", 400 * DAY_MS, DAY_MS),
    concurrency: readInteger(env, "DISPATCHER_CONCURRENCY", 256, 1, 10_000),
    retryScheduleMs: retrySchedule(env),
    timeoutMs,
    leaseMs,
    failureWindowMs: readDuration(env, "WEBHOOK_FAILURE_WINDOW", 5 * DAY_MS),
    disableNoticeMs: readDuration(env, "WEBHOOK_DISABLE_NOTICE", DEFAULT_DISABLE_NOTICE_MS),
    notifyOperator: operator !== undefined,
    operatorWebhook: operator,
    endpointConcurrency: readInteger(env, "WEBHOOK_ENDPOINT_CONCURRENCY", 16, 1, 10_000),
    originConnections: readInteger(env, "WEBHOOK_ORIGIN_CONNECTIONS", 64, 1, 10_000),
    organizationConcurrency: env.WEBHOOK_ORGANIZATION_CONCURRENCY === undefined || env.WEBHOOK_ORGANIZATION_CONCURRENCY === ""
      ? undefined : readInteger(env, "WEBHOOK_ORGANIZATION_CONCURRENCY", 1, 1, 1_000_000),
    circuitThreshold: readInteger(env, "WEBHOOK_CIRCUIT_THRESHOLD", 10, 1, 1_000_000),
    circuitCooldownMs: readDuration(env, "WEBHOOK_CIRCUIT_COOLDOWN", 30_000),
    pollIntervalMs: readDuration(env, "DISPATCHER_POLL_INTERVAL", 1000),
    signatureHeader: readSignatureHeader(env),
    allowPrivateNetworks: readBoolean(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
    dns: dnsSettings(env, timeoutMs),
    mailServer: readMailServerSettings(env),
    developerAreaUrl: readDeveloperAreaAddress(env).developerAreaUrl,
    traces: readTraceSettings(env, "platter-dispatcher"),
  };
};
