import {
  type DatabaseSettings, type DeveloperAreaAddress, type Environment, readBoolean, readDatabaseSettings, readDeveloperAreaAddress, readDuration,
} from "@platter/ops";

/**
 * CLI configuration: where the database is (the same variables and defaults as the API and the
 * dispatcher, so the CLI and `npm start` always meet the same database), whether webhook URLs may
 * point at private networks, and where the Developer area's sign-in links lead. Parsed once into a
 * typed object.
 */
export interface CliConfig extends DatabaseSettings, DeveloperAreaAddress {
  readonly allowPrivateNetworks: boolean;
  /** How long a rotated-out signing secret keeps signing beside the new one. */
  readonly secretOverlapMs: number;
}

/** Reads the CLI's environment variables; throws `ConfigError` naming the first bad one. */
export const loadCliConfig = (env: Environment = process.env): CliConfig => ({
  ...readDatabaseSettings(env),
  ...readDeveloperAreaAddress(env),
  allowPrivateNetworks: readBoolean(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
  secretOverlapMs: readDuration(env, "WEBHOOK_SECRET_OVERLAP", 24 * 60 * 60 * 1000, 0),
});
