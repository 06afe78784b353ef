import {
  ConfigError, type DatabaseSettings, type Environment, type ProcessSettings, readBoolean, readDatabaseSettings, readInteger,
  readProcessSettings,
} from "@platter/ops";

import type { RateLimitSettings } from "./rate-limits.ts";

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
  /** Per-key rate limits, shared out between the instances live. */
  readonly rateLimits: RateLimitSettings;
}

/** Reads the API's environment variables; throws `ConfigError` naming the first bad one. */
export const loadApiConfig = (env: Environment = process.env): ApiConfig => ({
  ...readDatabaseSettings(env),
  ...readProcessSettings(env),
  port: readInteger(env, "PORT", 3000, 0, 65535),
  opsPort: readInteger(env, "OPS_PORT", 9464, 0, 65535),
  shutdownGraceMs: readInteger(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
  logRequests: readBoolean(env, "REQUEST_LOG", true),
  rateLimits: {
    requestsPerSecond: readInteger(env, "RATE_LIMIT", 100, 1, 1_000_000_000),
    requestBurst: readInteger(env, "RATE_LIMIT_BURST", 200, 1, 1_000_000_000),
    createsPerSecond: readInteger(env, "RATE_LIMIT_CREATES", 20, 1, 1_000_000_000),
    createBurst: readInteger(env, "RATE_LIMIT_CREATES_BURST", 40, 1, 1_000_000_000),
  },
});
