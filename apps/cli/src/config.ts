import {
  type ApiKeySettings, readApiKeySettings, type DatabaseSettings, type DeveloperAreaAddress, type Environment, readDatabaseSettings, readDeveloperAreaAddress, readMatching, readOrigin,
  readWebhookEndpointSettings, type WebhookEndpointSettings,
} from "@platter/ops";

/**
 * CLI configuration: where the database is (the same variables and defaults as the API and the
 * dispatcher, so the CLI and `npm start` always meet the same database), whether webhook URLs may
 * point at private networks and how long a rotated-out secret keeps signing (as the Developer area
 * reads them), how many API keys an organization may have, and where the Developer area's sign-in links lead. Parsed once into a typed object.
 */
export interface CliConfig extends DatabaseSettings, DeveloperAreaAddress, WebhookEndpointSettings, ApiKeySettings {}

/** Reads the CLI's environment variables; throws `ConfigError` naming the first bad one. */
export const loadCliConfig = (env: Environment = process.env): CliConfig => ({
  ...readDatabaseSettings(env),
  ...readDeveloperAreaAddress(env),
  ...readWebhookEndpointSettings(env),
  ...readApiKeySettings(env),
});

/** Where `npm start` serves the Developer area: the default origin of the commands that work with a key. */
export const DEFAULT_DEVELOPER_AREA_ORIGIN = "http://localhost:3001";

/**
 * What the commands that work with an integrator's API key (`platter listen`, `platter trigger`
 * without `--org`) read: the key and the Developer area's origin, and nothing of the database
 * (those commands never open it, so a missing or unreachable `DATABASE_URL` cannot stop them).
 */
export interface KeyCommandConfig {
  /** `PLATTER_API_KEY`: the key sent as `Authorization: Bearer …`; `undefined` when unset (then `--api-key` is needed). */
  readonly apiKey: string | undefined;
  /** `PLATTER_DEVELOPER_AREA_URL` (`http://localhost:3001`): the Developer area's origin; the `/cli/…` paths are appended. */
  readonly developerAreaOrigin: string;
}

/** Printable text without spaces: what can travel in an `Authorization` header (the Developer area judges the key itself). */
export const API_KEY_TEXT = /^[\x21-\x7e]+$/;

/** Reads `PLATTER_API_KEY` and `PLATTER_DEVELOPER_AREA_URL`; throws `ConfigError` naming a bad one. */
export const loadKeyCommandConfig = (env: Environment = process.env): KeyCommandConfig => {
  const apiKey = readMatching(env, "PLATTER_API_KEY", "", API_KEY_TEXT, "an API key such as platter_test_rw_… (no spaces)");
  return {
    apiKey: apiKey === "" ? undefined : apiKey,
    developerAreaOrigin: readOrigin(env, "PLATTER_DEVELOPER_AREA_URL", DEFAULT_DEVELOPER_AREA_ORIGIN),
  };
};
