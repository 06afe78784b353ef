import { DEFAULT_API_KEYS_PER_ORGANIZATION, parseSecretKeys, type SecretKey } from "@platter/domain";
import proxyAddr from "proxy-addr";
import type { TrustedProxies } from "./client-address.ts";
import type { RateLimitSettings } from "./rate-limits.ts";

/**
 * Configuration: reading environment values into typed settings, the one home of every reader.
 * Pure functions of the environment record, so each process parses its configuration once, at
 * start, and a bad value stops it with a message naming the variable.
 */

/** A configuration problem, reported before anything starts. */
export class ConfigError extends Error {}

export type Environment = Readonly<Record<string, string | undefined>>;

const present = (env: Environment, name: string): string | undefined => {
  const raw = env[name];
  return raw === undefined || raw.trim() === "" ? undefined : raw.trim();
};

/** An integer in [min, max], or `fallback` when unset. */
export const readInteger = (env: Environment, name: string, fallback: number, min: number, max: number): number => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
};

/** One of `allowed`, or `fallback` when unset. */
export const readChoice = <T extends string>(env: Environment, name: string, allowed: readonly T[], fallback: T): T => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}`);
  return raw as T;
};

/** `true`/`false` (also 1/0, yes/no), or `fallback` when unset. */
export const readBoolean = (env: Environment, name: string, fallback: boolean): boolean => {
  const raw = present(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["true", "1", "yes"].includes(raw)) return true;
  if (["false", "0", "no"].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};

/** A duration such as `15s`, `500ms`, `5d` of at least `minimumMs`, or `fallback` (ms) when unset. */
export const readDuration = (env: Environment, name: string, fallbackMs: number, minimumMs = 1): number => {
  const raw = present(env, name);
  if (raw === undefined) return fallbackMs;
  const ms = parseDuration(raw);
  if (ms === undefined) throw new ConfigError(`${name} must be a duration such as 500ms, 15s, 5m, 2h or 5d, got "${raw}"`);
  if (ms < minimumMs) throw new ConfigError(`${name} must be at least ${minimumMs}ms, got "${raw}"`);
  return ms;
};

/** A PostgreSQL URL, or `undefined` when unset (the embedded local server is used then). */
export const readDatabaseUrl = (env: Environment, name = "DATABASE_URL"): string | undefined => {
  const raw = present(env, name);
  if (raw !== undefined && !/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError(`${name} must be a postgres:// URL`);
  return raw;
};

/** Text matching `pattern` (described by `expected` in the error), or `fallback` when unset. */
export const readMatching = (env: Environment, name: string, fallback: string, pattern: RegExp, expected: string): string => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (!pattern.test(raw)) throw new ConfigError(`${name} must be ${expected}, got "${raw}"`);
  return raw;
};

/** An http(s) origin such as `https://developers.example.com` (no path), or `fallback` when unset. */
export const readOrigin = (env: Environment, name: string, fallback: string): string => {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  const bare = url !== undefined && (url.pathname === "/" || url.pathname === "") && url.search === "" && url.hash === "" && url.username === "" && url.password === "";
  if (url === undefined || !["http:", "https:"].includes(url.protocol) || !bare) {
    throw new ConfigError(`${name} must be an http(s) address without a path, such as https://developers.example.com, got "${raw}"`);
  }
  return url.origin;
};

/** Where the Developer area listens, and the public address its sign-in links start with. */
export interface DeveloperAreaAddress {
  readonly developerAreaPort: number;
  /** The origin users reach the area at (behind a proxy, the proxy's); links are `<origin>/sign-in/<token>`. */
  readonly developerAreaUrl: string;
}

/**
 * `DEVELOPER_AREA_PORT` (3001, beside the API's 3000) and `DEVELOPER_AREA_PUBLIC_URL`
 * (`http://localhost:<port>` when unset): read alike by the area itself, `npm start` and the CLI,
 * so the links they print lead to the area.
 */
export const readDeveloperAreaAddress = (env: Environment): DeveloperAreaAddress => {
  const developerAreaPort = readInteger(env, "DEVELOPER_AREA_PORT", 3001, 0, 65535);
  return {
    developerAreaPort,
    developerAreaUrl: readOrigin(env, "DEVELOPER_AREA_PUBLIC_URL", `http://localhost:${developerAreaPort}`),
  };
};

/** How webhook endpoints are registered and their secrets rotated, wherever that is done (the CLI, the Developer area). */
export interface WebhookEndpointSettings {
  /** Whether endpoint URLs may point at loopback and private networks (the SSRF guard off; local development and tests). */
  readonly allowPrivateNetworks: boolean;
  /** How long a rotated-out signing secret keeps signing beside the new one. */
  readonly secretOverlapMs: number;
  /** How many endpoints one organization may have registered (disabled ones count): a message fans out to each. */
  readonly endpointsPerOrganization: number;
}

/**
 * `WEBHOOK_ALLOW_PRIVATE_NETWORKS` (false), `WEBHOOK_SECRET_OVERLAP` (24 h) and
 * `WEBHOOK_ENDPOINTS_PER_ORGANIZATION` (50): read alike by every
 * place that registers endpoints or rotates their secrets, so the CLI and the Developer area apply
 * the same guard and the same overlap (the dispatcher reads the first for its sockets).
 */
export const readWebhookEndpointSettings = (env: Environment): WebhookEndpointSettings => ({
  allowPrivateNetworks: readBoolean(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
  secretOverlapMs: readDuration(env, "WEBHOOK_SECRET_OVERLAP", 24 * 60 * 60 * 1000, 0),
  endpointsPerOrganization: readInteger(env, "WEBHOOK_ENDPOINTS_PER_ORGANIZATION", 50, 1, 10_000),
});

/** How many API keys an organization may have, wherever keys are created (the CLI, the Developer area). */
export interface ApiKeySettings {
  /** The most working keys (not revoked, expired or replaced by a roll) one organization may have. */
  readonly apiKeysPerOrganization: number;
}

/** `API_KEYS_PER_ORGANIZATION` (100, as the domain's `DEFAULT_API_KEYS_PER_ORGANIZATION`), read alike by the CLI and the Developer area. */
export const readApiKeySettings = (env: Environment): ApiKeySettings => ({
  apiKeysPerOrganization: readInteger(env, "API_KEYS_PER_ORGANIZATION", DEFAULT_API_KEYS_PER_ORGANIZATION, 1, 10_000),
});

/**
 * `WEBHOOK_SIGNATURE_HEADER` (`x-platter-signature`): the header carrying the spec's hex signature,
 * read alike by the dispatcher and the Developer area (which signs what `platter listen` forwards).
 */
export const readSignatureHeader = (env: Environment): string => {
  const raw = env["WEBHOOK_SIGNATURE_HEADER"]?.trim() || "x-platter-signature";
  if (!/^[A-Za-z0-9-]+$/.test(raw)) throw new ConfigError("WEBHOOK_SIGNATURE_HEADER must be a header name");
  return raw.toLowerCase();
};

const SECOND = 1000;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: SECOND, m: 60 * SECOND, h: 3600 * SECOND, d: 86_400 * SECOND };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;

/** Parses a duration such as `15s`, `500ms`, `5d`. */
export const parseDuration = (text: string): number | undefined => {
  const match = DURATION.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * UNIT_MS[match[2]!]!;
};

/** Parses a list of durations (`0s,1s,2s`), such as a retry schedule. */
export const parseDurations = (text: string): ReadonlyArray<number> | undefined => {
  const delays = text.split(",").map(parseDuration);
  return delays.length > 0 && delays.every((d) => d !== undefined) ? (delays as number[]) : undefined;
};

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where the database is (a URL, or the embedded server's data directory and port), and how long to wait for it. */
export interface DatabaseSettings {
  readonly databaseUrl: string | undefined;
  /** Relative to the working directory; resolved by whoever starts the embedded server. */
  readonly dataDir: string;
  readonly localPostgresPort: number;
  /** Longest wait to open a connection or to get one from the pool. */
  readonly connectTimeoutMs: number;
  /** Longest a statement may run (the server cancels it; the client gives up on a server that does not answer). */
  readonly statementTimeoutMs: number;
  /** How long a starting process waits for its database before it gives up. */
  readonly startTimeoutMs: number;
  /** `transaction`: `DATABASE_URL` is a pooler in transaction mode (PgBouncer's `pool_mode = transaction`), not a session of its own. */
  readonly pooler: DatabasePooler;
  /** Whether frequent statements are prepared under a name (parsed and planned once per connection) or sent unnamed. */
  readonly preparedStatements: PreparedStatements;
  /** Where a process that LISTENs (the dispatcher) connects for it: PostgreSQL itself, past a transaction pooler. */
  readonly listenUrl: string | undefined;
  /**
   * The keys signing secrets are sealed with at rest (`SECRET_ENCRYPTION_KEYS`), the first sealing;
   * undefined when unset: then only the embedded database may be used, whose key file is made and kept beside its data.
   */
  readonly secretKeys: ReadonlyArray<SecretKey> | undefined;
}

export const DATABASE_POOLERS = ["none", "transaction"] as const;
export type DatabasePooler = (typeof DATABASE_POOLERS)[number];
export const PREPARED_STATEMENTS = ["named", "unnamed"] as const;
export type PreparedStatements = (typeof PREPARED_STATEMENTS)[number];

/**
 * Where the database is and how to talk to it. Behind a transaction pooler
 * (`DATABASE_POOLER=transaction`) statements are unnamed unless `DATABASE_PREPARED_STATEMENTS=named`
 * says the pooler tracks them (PgBouncer 1.21+ with `max_prepared_statements`): a named statement
 * prepared on one server connection is unknown, or already known, on the next.
 */
export const readDatabaseSettings = (env: Environment): DatabaseSettings => {
  const pooler = readChoice(env, "DATABASE_POOLER", DATABASE_POOLERS, "none");
  return {
    databaseUrl: readDatabaseUrl(env),
    dataDir: present(env, "PLATTER_DATA_DIR") ?? ".data",
    localPostgresPort: readInteger(env, "PLATTER_LOCAL_PG_PORT", 54329, 1, 65535),
    connectTimeoutMs: readDuration(env, "DATABASE_CONNECT_TIMEOUT", 2_000),
    statementTimeoutMs: readDuration(env, "DATABASE_STATEMENT_TIMEOUT", 5_000),
    startTimeoutMs: readDuration(env, "DATABASE_START_TIMEOUT", 30_000),
    pooler,
    preparedStatements: readChoice(env, "DATABASE_PREPARED_STATEMENTS", PREPARED_STATEMENTS, pooler === "transaction" ? "unnamed" : "named"),
    listenUrl: readDatabaseUrl(env, "DATABASE_LISTEN_URL"),
    secretKeys: readSecretKeys(env),
  };
};

/**
 * `SECRET_ENCRYPTION_KEYS`: comma-separated `<id>:<base64 of 32 bytes>` (`openssl rand -base64 32`),
 * the first sealing stored secrets and every one opening them; undefined when unset.
 */
export const readSecretKeys = (env: Environment, name = "SECRET_ENCRYPTION_KEYS"): ReadonlyArray<SecretKey> | undefined => {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  const keys = parseSecretKeys(raw);
  // The message never repeats the value: it is a key.
  if (typeof keys === "string") throw new ConfigError(`${name} ${keys}`);
  return keys;
};

/** Streaming replicas that may serve a request process's reads, and how stale a read may be. */
export interface ReplicaReadSettings {
  /** `DATABASE_REPLICA_URLS`: none (an empty list) unless set. */
  readonly urls: ReadonlyArray<string>;
  /** A replica more than this behind the primary takes no reads until it catches up. */
  readonly maxLagMs: number;
  /** Longest a replica may take to connect or answer one read before that read runs on the primary. */
  readonly timeoutMs: number;
  /** After a key (or a Developer-area browser) writes, its reads go to the primary for this long. */
  readonly readYourWritesMs: number;
}

/**
 * `DATABASE_REPLICA_URLS` (comma-separated postgres:// URLs of hot standbys of `DATABASE_URL`),
 * `DATABASE_REPLICA_MAX_LAG`, `DATABASE_REPLICA_TIMEOUT` and `READ_YOUR_WRITES_WINDOW`, which may
 * not be shorter than the lag bound: a replica serving reads is never further behind than the
 * bound, so once the window has passed, any replica allowed to answer has the write.
 */
export const readReplicaReadSettings = (env: Environment): ReplicaReadSettings => {
  const urls = (present(env, "DATABASE_REPLICA_URLS") ?? "").split(",").map((url) => url.trim()).filter((url) => url !== "");
  urls.forEach((url, index) => readDatabaseUrl({ [`DATABASE_REPLICA_URLS (entry ${index + 1})`]: url }, `DATABASE_REPLICA_URLS (entry ${index + 1})`));
  const maxLagMs = readDuration(env, "DATABASE_REPLICA_MAX_LAG", 1_000, 100);
  const readYourWritesMs = readDuration(env, "READ_YOUR_WRITES_WINDOW", 5_000, 100);
  if (readYourWritesMs < maxLagMs) {
    throw new ConfigError(`READ_YOUR_WRITES_WINDOW (${readYourWritesMs}ms) must be at least DATABASE_REPLICA_MAX_LAG (${maxLagMs}ms): a replica may be that far behind`);
  }
  return { urls, maxLagMs, timeoutMs: readDuration(env, "DATABASE_REPLICA_TIMEOUT", 1_000, 50), readYourWritesMs };
};

/** How webhook history (messages, deliveries, attempts) is kept: partitions of a fixed width, dropped whole after the retention. */
export interface WebhookHistorySettings {
  /** `WEBHOOK_RETENTION`: how long a message's history is kept, counted from its creation. */
  readonly retentionMs: number;
  /** `WEBHOOK_HISTORY_PARTITION`: the width of each time partition. */
  readonly partitionMs: number;
  /** How far past now partitions are made ahead: 8 widths (`historyAhead`). */
  readonly aheadMs: number;
  /** How often the API makes them ahead: every 2 widths, at most hourly (`historyAhead`). */
  readonly makeAheadEveryMs: number;
}

const DAY_MS = 24 * 3600_000;

/**
 * How far ahead a family's partitions are made, and how often the API's turn makes them: 8 widths
 * ahead, every 2 widths (at most hourly), so a write finds a partition through 3 failed turns in a
 * row. Not a fixed time ahead: at a minute's width, 2 hours ahead was 120 partitions per table, and
 * every statement on the history planned over all of them (hundreds of ms after each partition's DDL).
 */
const historyAhead = (partitionMs: number) => ({ aheadMs: 8 * partitionMs, makeAheadEveryMs: Math.min(3600_000, 2 * partitionMs) });

/** The partition width a retention gets when none is set: an eighth of it, from a minute to a day. */
export const defaultPartitionWidth = (retentionMs: number): number => Math.min(DAY_MS, Math.max(60_000, Math.round(retentionMs / 8)));

/** `WEBHOOK_RETENTION` (30d) and `WEBHOOK_HISTORY_PARTITION` (the retention / 8, from 1m to 1d; at least 1m). */
export const readWebhookHistorySettings = (env: Environment): WebhookHistorySettings => {
  const retentionMs = readDuration(env, "WEBHOOK_RETENTION", 30 * DAY_MS);
  const partitionMs = readDuration(env, "WEBHOOK_HISTORY_PARTITION", defaultPartitionWidth(retentionMs), 60_000);
  return { retentionMs, partitionMs, ...historyAhead(partitionMs) };
};

/** How the organizations' request log is kept (the API writes it, the Developer area shows it). */
export interface RequestHistorySettings {
  /** Share of successful requests kept, in percent (0 to 100); every 4xx and 5xx is kept. */
  readonly successPercent: number;
  /** How long requests are kept. */
  readonly retentionMs: number;
  /** `REQUEST_HISTORY_PARTITION`: the width of each time partition of the log (dropped whole once past the retention). */
  readonly partitionMs: number;
  /** How far past now partitions are made ahead: 8 widths (`historyAhead`). */
  readonly aheadMs: number;
  /** How often the API makes them ahead: every 2 widths, at most hourly (`historyAhead`). */
  readonly makeAheadEveryMs: number;
}

/**
 * `REQUEST_HISTORY_SUCCESS_PERCENT` (1), `REQUEST_HISTORY_RETENTION` (14d, at least 1h) and
 * `REQUEST_HISTORY_PARTITION` (the retention / 8, from 1m to 1d; at least 1m).
 */
export const readRequestHistorySettings = (env: Environment): RequestHistorySettings => {
  const retentionMs = readDuration(env, "REQUEST_HISTORY_RETENTION", 14 * DAY_MS, 3600_000);
  const partitionMs = readDuration(env, "REQUEST_HISTORY_PARTITION", defaultPartitionWidth(retentionMs), 60_000);
  return {
    successPercent: readInteger(env, "REQUEST_HISTORY_SUCCESS_PERCENT", 1, 0, 100),
    retentionMs,
    partitionMs,
    ...historyAhead(partitionMs),
  };
};

/** What every server process reads the same way: where to listen, how much to log, its pool. */
export interface ProcessSettings {
  /** The interface of the public port (`HOST`, every interface by default). */
  readonly host: string;
  /**
   * The interface of the operations port (`OPS_HOST`, `127.0.0.1` by default): its `/metrics` names
   * organizations and endpoints and its `/readyz` pings the database, so it is not served to
   * whoever reaches the public port unless the operator says so.
   */
  readonly opsHost: string;
  readonly logLevel: LogLevel;
  readonly poolSize: number;
}

/** `HOST`, `OPS_HOST`, `LOG_LEVEL` and `DATABASE_POOL_SIZE`, as every server process reads them. */
export const readProcessSettings = (env: Environment): ProcessSettings => ({
  host: present(env, "HOST") ?? "0.0.0.0",
  opsHost: present(env, "OPS_HOST") ?? "127.0.0.1",
  logLevel: readChoice(env, "LOG_LEVEL", LOG_LEVELS, "info"),
  poolSize: readInteger(env, "DATABASE_POOL_SIZE", 10, 1, 200),
});

/** The largest rate limit a setting may name. */
const RATE_LIMIT_MAX = 1_000_000_000;

/** A key's own limit may only be lower than its organization's: `name` read with the organization's value as default and ceiling. */
const readKeyLimit = (env: Environment, name: string, organizationName: string, organizationValue: number): number => {
  const value = readInteger(env, name, organizationValue, 1, RATE_LIMIT_MAX);
  if (value > organizationValue) throw new ConfigError(`${name} must be at most ${organizationName} (${organizationValue}), got "${value}"`);
  return value;
};

/** `RATE_LIMIT*`: the organization's limits, a key's own (at most the organization's) and failed authentications per address. */
export const readRateLimits = (env: Environment): RateLimitSettings => {
  const requestsPerSecond = readInteger(env, "RATE_LIMIT", 100, 1, RATE_LIMIT_MAX);
  const requestBurst = readInteger(env, "RATE_LIMIT_BURST", 200, 1, RATE_LIMIT_MAX);
  return {
    requestsPerSecond,
    requestBurst,
    createsPerSecond: readInteger(env, "RATE_LIMIT_CREATES", 20, 1, RATE_LIMIT_MAX),
    createBurst: readInteger(env, "RATE_LIMIT_CREATES_BURST", 40, 1, RATE_LIMIT_MAX),
    keyRequestsPerSecond: readKeyLimit(env, "RATE_LIMIT_KEY", "RATE_LIMIT", requestsPerSecond),
    keyRequestBurst: readKeyLimit(env, "RATE_LIMIT_KEY_BURST", "RATE_LIMIT_BURST", requestBurst),
    authFailures: readInteger(env, "RATE_LIMIT_AUTH_FAILURES", 20, 1, RATE_LIMIT_MAX),
    authFailureWindowSeconds: Math.ceil(readDuration(env, "RATE_LIMIT_AUTH_FAILURES_WINDOW", 60_000, 1_000) / 1000),
  };
};

/**
 * `TRUST_PROXY`: `false` (the default: the connection's peer is the client), a number of proxies
 * in front of every request, or a comma-separated list of proxy addresses and ranges.
 */
export const readTrustProxy = (env: Environment): TrustedProxies => {
  const raw = readMatching(env, "TRUST_PROXY", "false", /^[\w.:/%, -]+$/, "false, a number of proxies, or a list of proxy addresses");
  if (["false", "0", "no"].includes(raw.toLowerCase())) return { kind: "none" };
  if (/^\d+$/.test(raw)) return { kind: "hops", hops: readInteger(env, "TRUST_PROXY", 0, 1, 10) };
  const addresses = raw.split(",").map((part) => part.trim()).filter((part) => part !== "");
  try {
    proxyAddr.compile(addresses);
  } catch (error) {
    throw new ConfigError(`TRUST_PROXY must be false, a number of proxies from 1 to 10, or a list of addresses, ranges (10.0.0.0/8) or loopback, linklocal, uniquelocal: ${(error as Error).message}`);
  }
  return { kind: "addresses", addresses };
};

/** `SMTP_URL` and `SMTP_FROM`: the SMTP server alert e-mails go through, and their sender. */
export interface MailServerSettings {
  /** `smtp://[user:password@]host[:port]` (STARTTLS when the server offers it) or `smtps://…` (TLS from the start). */
  readonly smtpUrl: string;
  /** The From address, `alerts@example.com` or `Platter <alerts@example.com>`. */
  readonly from: string;
}

/**
 * `SMTP_URL` and `SMTP_FROM`, read alike by the dispatcher (alerts) and the Developer area
 * (confirmation links); undefined when `SMTP_URL` is unset: no e-mail is sent at all.
 */
export const readMailServerSettings = (env: Environment): MailServerSettings | undefined => {
  const smtpUrl = env["SMTP_URL"]?.trim() || undefined;
  if (smtpUrl === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(smtpUrl);
  } catch {
    throw new ConfigError("SMTP_URL must be an smtp:// or smtps:// URL");
  }
  // The URL may carry a password: it is never echoed.
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") throw new ConfigError("SMTP_URL must be an smtp:// or smtps:// URL");
  const from = env["SMTP_FROM"]?.trim() || undefined;
  if (from === undefined) throw new ConfigError("SMTP_FROM must be set with SMTP_URL: the address alert e-mails come from");
  if (!/^[^\r\n]*@[^\r\n]+$/.test(from)) throw new ConfigError(`SMTP_FROM must be an e-mail address, got "${from}"`);
  return { smtpUrl, from };
};

/** How new traces are sampled (OTEL_TRACES_SAMPLER): the OpenTelemetry names this process knows. */
export const TRACE_SAMPLERS = [
  "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio",
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

/** Where and how spans are exported over OTLP/HTTP, read from the standard `OTEL_*` variables. */
export interface TraceSettings {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
  readonly url: string;
  /** OTEL_EXPORTER_OTLP_TRACES_HEADERS, else OTEL_EXPORTER_OTLP_HEADERS (`key=value,…`, values percent-decoded). */
  readonly headers: Readonly<Record<string, string>>;
  /** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL: `http/protobuf` (the default) or `http/json`. */
  readonly protocol: "http/protobuf" | "http/json";
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else the process's own name. */
  readonly serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES (`key=value,…`), `service.name` taken out. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: TraceSampler;
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers: the share of new traces recorded, 0 to 1 (default 1). */
  readonly samplerRatio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: how often buffered spans are sent (ms, default 5000). */
  readonly exportIntervalMs: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per request at most (default 512); a full batch is sent at once. */
  readonly maxBatchSize: number;
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT: longest one export request waits (ms, default 10000). */
  readonly timeoutMs: number;
}

/** `key=value,key=value` with percent-encoded values, as OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES write them. */
const readKeyValueList = (env: Environment, name: string): Record<string, string> | undefined => {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  const pairs: Record<string, string> = {};
  for (const item of raw.split(",")) {
    if (item.trim() === "") continue;
    const at = item.indexOf("=");
    const key = at < 0 ? "" : item.slice(0, at).trim();
    if (key === "") throw new ConfigError(`${name} must be a list of key=value pairs separated by commas, got "${raw}"`);
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${name}: the value of ${key} is not percent-encoded text`);
    }
  }
  return pairs;
};

/** An http(s) URL, or undefined when unset. */
const readHttpUrl = (env: Environment, name: string): URL | undefined => {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ConfigError(`${name} must be an http:// or https:// URL, got "${raw}"`);
  return url;
};

/**
 * The trace export's settings from the standard OpenTelemetry variables, or undefined when nothing
 * is to be exported: no OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, OTEL_SDK_DISABLED=true, or
 * OTEL_TRACES_EXPORTER=none. `serviceName` names the process when OTEL_SERVICE_NAME does not.
 */
export const readTraceSettings = (env: Environment, serviceName: string): TraceSettings | undefined => {
  if (readBoolean(env, "OTEL_SDK_DISABLED", false)) return undefined;
  const exporter = readChoice(env, "OTEL_TRACES_EXPORTER", ["otlp", "none"], "otlp");
  const tracesUrl = readHttpUrl(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const baseUrl = readHttpUrl(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (exporter === "none" || (tracesUrl === undefined && baseUrl === undefined)) return undefined;
  let url = tracesUrl;
  if (url === undefined) {
    url = new URL(baseUrl!);
    url.pathname = `${url.pathname.replace(/\/$/, "")}/v1/traces`;
  }
  const protocols = ["http/protobuf", "http/json"] as const;
  const protocol = present(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") === undefined
    ? readChoice(env, "OTEL_EXPORTER_OTLP_PROTOCOL", protocols, "http/protobuf")
    : readChoice(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", protocols, "http/protobuf");
  const resource = readKeyValueList(env, "OTEL_RESOURCE_ATTRIBUTES") ?? {};
  const { ["service.name"]: resourceServiceName, ...resourceAttributes } = resource;
  const sampler = readChoice(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, "parentbased_always_on");
  const ratioText = sampler.endsWith("traceidratio") ? present(env, "OTEL_TRACES_SAMPLER_ARG") : undefined;
  const samplerRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${ratioText}"`);
  }
  const timeoutName = present(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") === undefined ? "OTEL_EXPORTER_OTLP_TIMEOUT" : "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
  return {
    url: url.toString(),
    headers: readKeyValueList(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? readKeyValueList(env, "OTEL_EXPORTER_OTLP_HEADERS") ?? {},
    protocol,
    serviceName: present(env, "OTEL_SERVICE_NAME") ?? resourceServiceName ?? serviceName,
    resourceAttributes,
    sampler,
    samplerRatio,
    exportIntervalMs: readInteger(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000, 10, 600_000),
    maxBatchSize: readInteger(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1, 100_000),
    timeoutMs: readInteger(env, timeoutName, 10_000, 100, 600_000),
  };
};
