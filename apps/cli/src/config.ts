import { type DatabaseSettings, type Environment, readBoolean, readDatabaseSettings } from "@platter/ops";

/**
 * CLI configuration: where the database is (the same variables and defaults as the API and the
 * dispatcher, so the CLI and `npm start` always meet the same database), and whether webhook URLs
 * may point at private networks. Parsed once into a typed object.
 */
export interface CliConfig extends DatabaseSettings {
  readonly allowPrivateNetworks: boolean;
}

/** Reads the CLI's environment variables; throws `ConfigError` naming the first bad one. */
export const loadCliConfig = (env: Environment = process.env): CliConfig => ({
  ...readDatabaseSettings(env),
  allowPrivateNetworks: readBoolean(env, "WEBHOOK_ALLOW_PRIVATE_NETWORKS", false),
});
