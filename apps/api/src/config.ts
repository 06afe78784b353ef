import { resolve } from "node:path";

/** API configuration: parsed and validated once at start into a typed object. */
export interface ApiConfig {
  /** Public port: the spec's endpoints and nothing else. */
  readonly port: number;
  /** Operations port: `/healthz` and `/readyz`. */
  readonly opsPort: number;
  readonly host: string;
  /** PostgreSQL URL; when absent the embedded local server is used. */
  readonly databaseUrl: string | undefined;
  /** Where the embedded server keeps its data. */
  readonly dataDir: string;
  readonly localPostgresPort: number;
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "silent";
  readonly poolSize: number;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  readonly shutdownGraceMs: number;
}

/** A configuration problem, reported before anything starts. */
export class ConfigError extends Error {}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "silent"] as const;

const integer = (env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
};

const oneOf = <T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T => {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}`);
  return raw as T;
};

const databaseUrl = (raw: string | undefined): string | undefined => {
  if (raw === undefined || raw === "") return undefined;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError("DATABASE_URL must be a postgres:// URL");
  return raw;
};

/** Reads the API's environment variables; throws `ConfigError` naming the first bad one. */
export const loadApiConfig = (env: NodeJS.ProcessEnv = process.env): ApiConfig => ({
  port: integer(env, "PORT", 3000, 0, 65535),
  opsPort: integer(env, "OPS_PORT", 9464, 0, 65535),
  host: env["HOST"] || "0.0.0.0",
  databaseUrl: databaseUrl(env["DATABASE_URL"]),
  dataDir: resolve(env["PLATTER_DATA_DIR"] || ".data"),
  localPostgresPort: integer(env, "PLATTER_LOCAL_PG_PORT", 54329, 1, 65535),
  logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
  poolSize: integer(env, "DATABASE_POOL_SIZE", 10, 1, 200),
  shutdownGraceMs: integer(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
});
