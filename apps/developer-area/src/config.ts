import {
  ConfigError, type DatabaseSettings, type DeveloperAreaAddress, type Environment, type ProcessSettings, readDatabaseSettings,
  readDeveloperAreaAddress, readMatching, readProcessSettings, readWebhookEndpointSettings, type WebhookEndpointSettings,
} from "@platter/ops";

export { ConfigError };

/** Developer-area configuration: parsed and validated once at start into a typed object. */
export interface DeveloperAreaConfig extends DatabaseSettings, ProcessSettings, DeveloperAreaAddress, WebhookEndpointSettings {
  /**
   * The Content-Security-Policy's `frame-ancestors` sources: who may show the area in a frame
   * (`'self'` by default; add the catering application's origin to embed it there).
   */
  readonly frameAncestors: string;
}

/** CSP source expressions separated by spaces: no `;` or `,` (which would end the directive), no control characters. */
const SOURCE_LIST = /^[A-Za-z0-9'*:/.\-_ ]+$/;

/** Reads the Developer area's environment variables; throws `ConfigError` naming the first bad one. */
export const loadDeveloperAreaConfig = (env: Environment = process.env): DeveloperAreaConfig => ({
  ...readDatabaseSettings(env),
  ...readProcessSettings(env),
  ...readDeveloperAreaAddress(env),
  ...readWebhookEndpointSettings(env),
  frameAncestors: readMatching(
    env, "DEVELOPER_AREA_FRAME_ANCESTORS", "'self'", SOURCE_LIST, "CSP sources separated by spaces, such as 'self' https://app.example.com",
  ),
});
