import {
  ConfigError, type DatabaseSettings, type Environment, type ProcessSettings, readBoolean, readDatabaseSettings, readDuration,
  readInteger, readMatching, readProcessSettings, readReplicaReadSettings, readRequestHistorySettings, type ReplicaReadSettings,
} from "@platter/ops";
import proxyAddr from "proxy-addr";

import type { TrustedProxies } from "@platter/ops";
import type { RateLimitSettings } from "./rate-limits.ts";
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
}

const LIMIT = 1_000_000_000;

/** A key's own limit may only be lower than its organization's: `name` read with the organization's value as default and ceiling. */
const readKeyLimit = (env: Environment, name: string, organizationName: string, organizationValue: number): number => {
  const value = readInteger(env, name, organizationValue, 1, LIMIT);
  if (value > organizationValue) throw new ConfigError(`${name} must be at most ${organizationName} (${organizationValue}), got "${value}"`);
  return value;
};

/** `RATE_LIMIT*`: the organization's limits, a key's own (at most the organization's) and failed authentications per address. */
export const readRateLimits = (env: Environment): RateLimitSettings => {
  const requestsPerSecond = readInteger(env, "RATE_LIMIT", 100, 1, LIMIT);
  const requestBurst = readInteger(env, "RATE_LIMIT_BURST", 200, 1, LIMIT);
  return {
    requestsPerSecond,
    requestBurst,
    createsPerSecond: readInteger(env, "RATE_LIMIT_CREATES", 20, 1, LIMIT),
    createBurst: readInteger(env, "RATE_LIMIT_CREATES_BURST", 40, 1, LIMIT),
    keyRequestsPerSecond: readKeyLimit(env, "RATE_LIMIT_KEY", "RATE_LIMIT", requestsPerSecond),
    keyRequestBurst: readKeyLimit(env, "RATE_LIMIT_KEY_BURST", "RATE_LIMIT_BURST", requestBurst),
    authFailures: readInteger(env, "RATE_LIMIT_AUTH_FAILURES", 20, 1, LIMIT),
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
  genericPlans: true,
});
