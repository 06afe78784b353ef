import {
  type DatabaseSettings, type DeveloperAreaAddress, type Environment, readDatabaseSettings, readDeveloperAreaAddress,
  readWebhookEndpointSettings, type WebhookEndpointSettings,
} from "@platter/ops";

/**
 * CLI configuration: where the database is (the same variables and defaults as the API and the
 * dispatcher, so the CLI and `npm start` always meet the same database), whether webhook URLs may
 * point at private networks and how long a rotated-out secret keeps signing (as the Developer area
 * reads them), and where the Developer area's sign-in links lead. Parsed once into a typed object.
 */
export interface CliConfig extends DatabaseSettings, DeveloperAreaAddress, WebhookEndpointSettings {}

/** Reads the CLI's environment variables; throws `ConfigError` naming the first bad one. */
export const loadCliConfig = (env: Environment = process.env): CliConfig => ({
  ...readDatabaseSettings(env),
  ...readDeveloperAreaAddress(env),
  ...readWebhookEndpointSettings(env),
});
