import {
  ConfigError, type DatabaseSettings, type Environment, type ProcessSettings, readDatabaseSettings, readInteger,
  readProcessSettings,
} from "@platter/ops";

export { ConfigError };

/** API configuration: parsed and validated once at start into a typed object. */
export interface ApiConfig extends DatabaseSettings, ProcessSettings {
  /** Public port: the spec's endpoints and nothing else. */
  readonly port: number;
  /** Operations port: `/healthz` and `/readyz`. */
  readonly opsPort: number;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  readonly shutdownGraceMs: number;
}

/** Reads the API's environment variables; throws `ConfigError` naming the first bad one. */
export const loadApiConfig = (env: Environment = process.env): ApiConfig => ({
  ...readDatabaseSettings(env),
  ...readProcessSettings(env),
  port: readInteger(env, "PORT", 3000, 0, 65535),
  opsPort: readInteger(env, "OPS_PORT", 9464, 0, 65535),
  shutdownGraceMs: readInteger(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
});
