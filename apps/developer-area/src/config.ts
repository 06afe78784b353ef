import {
  type ApiKeySettings, ConfigError, type DatabaseSettings, type DeveloperAreaAddress, type Environment, type ProcessSettings,
  type RateLimitSettings, readApiKeySettings, readDatabaseSettings, readDeveloperAreaAddress, readDuration, readInteger, readMatching,
  readProcessSettings, readRateLimits, readReplicaReadSettings, readRequestHistorySettings, readSignatureHeader, readTrustProxy,
  readWebhookEndpointSettings, type ReplicaReadSettings, type RequestHistorySettings, type TrustedProxies, type WebhookEndpointSettings,
  readMailServerSettings, type MailServerSettings,
} from "@platter/ops";

import { DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION, DEFAULT_LISTENERS_PER_ORGANIZATION } from "@platter/domain";

export { ConfigError };

/**
 * How many of each costly action one organization may take per window in the Developer area:
 * each makes the dispatcher send (test events, replays) or adds to what every message fans out to
 * (endpoints). Counted per organization in the process's memory.
 */
export interface DeveloperAreaLimits {
  /** Test events sent per window. */
  readonly testEvents: number;
  /** Endpoints added per window (on top of `WEBHOOK_ENDPOINTS_PER_ORGANIZATION`, the total). */
  readonly endpointCreates: number;
  /** Replays per window: a message, a delivery, or an endpoint's failed messages since a time. */
  readonly replays: number;
  /** API keys created or rolled per window (each writes a key and an audit row). */
  readonly keyChanges: number;
  /** Endpoint enables, disables, throttle changes, secret reveals and rotations per window (each an audit row, an enable a run of deliveries). */
  readonly endpointChanges: number;
  /** Sandbox creations and resets per window (each rewrites the sandbox's demo data). */
  readonly sandboxResets: number;
  /** Switches between the live organization and its sandbox per window (each writes a sign-in link and a session). */
  readonly sandboxSwitches: number;
  /** Alert addresses added per window: each mails a confirmation link, so this bounds the mail one organization makes Platter send. */
  readonly alertAddresses: number;
  /** The window, in milliseconds. */
  readonly windowMs: number;
}

/**
 * The limits as an unset environment gives them, per 10 minutes: 30 test events, 10 new endpoints, 30 replays, 20 key changes,
 * 60 endpoint changes, 10 sandbox resets, 30 sandbox switches and 10 alert addresses.
 */
export const DEFAULT_DEVELOPER_AREA_LIMITS: DeveloperAreaLimits = {
  testEvents: 30, endpointCreates: 10, replays: 30, keyChanges: 20, endpointChanges: 60, sandboxResets: 10, sandboxSwitches: 30, alertAddresses: 10,
  windowMs: 10 * 60 * 1000,
};

/** Developer-area configuration: parsed and validated once at start into a typed object. */
export interface DeveloperAreaConfig extends DatabaseSettings, ProcessSettings, DeveloperAreaAddress, WebhookEndpointSettings, ApiKeySettings {
  /**
   * The Content-Security-Policy's `frame-ancestors` sources: who may show the area in a frame
   * (`'self'` by default; add the catering application's origin to embed it there).
   */
  readonly frameAncestors: string;
  readonly limits: DeveloperAreaLimits;
  /** Streaming replicas for the pages' reads (`DATABASE_REPLICA_URLS`; none by default) and the read-your-writes window. */
  readonly replicas: ReplicaReadSettings;
  /** What the request log keeps, as the API keeps it (said on the Request log page). */
  readonly requestHistory: RequestHistorySettings;
  /** The header of the spec's hex signature on what `platter listen` forwards (`WEBHOOK_SIGNATURE_HEADER`, as the dispatcher signs). */
  readonly signatureHeader: string;
  /** `platter listen` sessions connected at once per organization (`LISTENERS_PER_ORGANIZATION`, 5). */
  readonly listenersPerOrganization: number;
  /** Signed-in requests one organization may have in flight at once (`DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION`, 4). */
  readonly pageLoadsPerOrganization: number;
  /** The API's rate limits (`RATE_LIMIT*`), which the CLI's routes apply as the API does. */
  readonly rateLimits: RateLimitSettings;
  /** Which proxies may tell the client's address (`TRUST_PROXY`, as the API reads it). */
  readonly trustProxy: TrustedProxies;
  /** How many alert e-mail addresses one organization may list, confirmed or waiting (`ALERT_RECIPIENTS_PER_ORGANIZATION`, 10). */
  readonly alertRecipientsPerOrganization: number;
  /** `SMTP_URL` and `SMTP_FROM`: where confirmation links are mailed (unset: alert addresses cannot be added). */
  readonly mailServer: MailServerSettings | undefined;
}

/** No `;` or `,` (which would end the directive), no control characters: checked before each source is. */
const SOURCE_LIST = /^[A-Za-z0-9'*:/.\-_ \[\]]+$/;

const FRAME_ANCESTORS_EXPECTED = "'self', 'none', or exact origins written scheme://host[:port], such as 'self' https://app.example.com";

/** One `frame-ancestors` source as given, or why it is refused: only `'self'` and exact http(s) origins. */
const frameSourceProblem = (source: string): string | undefined => {
  if (source === "'self'") return undefined;
  let url: URL | undefined;
  try {
    url = new URL(source);
  } catch {
    url = undefined;
  }
  if (url === undefined || !["http:", "https:"].includes(url.protocol) || source.includes("*")) {
    return `"${source}" is not an exact http(s) origin (no wildcard or bare scheme)`;
  }
  if (url.origin.toLowerCase() !== source.toLowerCase()) return `"${source}" is not an exact origin: write it ${url.origin}`;
  return undefined;
};

/**
 * `DEVELOPER_AREA_FRAME_ANCESTORS`: who may embed the area. Only `'self'`, `'none'` (alone) and
 * exact origins: a wildcard (`*`, `https:`, `https://*.example.com`) would let any site, or any
 * subdomain someone else controls, frame the signed-in area and trick its users into clicks.
 */
export const readFrameAncestors = (env: Environment): string => {
  const raw = readMatching(env, "DEVELOPER_AREA_FRAME_ANCESTORS", "'self'", SOURCE_LIST, FRAME_ANCESTORS_EXPECTED);
  const sources = raw.split(/\s+/);
  if (sources.includes("'none'")) {
    if (sources.length > 1) throw new ConfigError(`DEVELOPER_AREA_FRAME_ANCESTORS: 'none' must stand alone, got "${raw}"`);
    return "'none'";
  }
  for (const source of sources) {
    const problem = frameSourceProblem(source);
    if (problem !== undefined) throw new ConfigError(`DEVELOPER_AREA_FRAME_ANCESTORS must be ${FRAME_ANCESTORS_EXPECTED}: ${problem}`);
  }
  return sources.map((source) => (source === "'self'" ? source : new URL(source).origin)).join(" ");
};

/**
 * `DEVELOPER_AREA_TEST_EVENTS`, `DEVELOPER_AREA_ENDPOINT_CREATES`, `DEVELOPER_AREA_REPLAYS`, `DEVELOPER_AREA_KEY_CHANGES`,
 * `DEVELOPER_AREA_ENDPOINT_CHANGES`, `DEVELOPER_AREA_SANDBOX_RESETS`, `DEVELOPER_AREA_SANDBOX_SWITCHES`, `DEVELOPER_AREA_ALERT_ADDRESSES`
 * per `DEVELOPER_AREA_LIMIT_WINDOW`.
 */
export const readDeveloperAreaLimits = (env: Environment): DeveloperAreaLimits => ({
  testEvents: readInteger(env, "DEVELOPER_AREA_TEST_EVENTS", DEFAULT_DEVELOPER_AREA_LIMITS.testEvents, 1, 1_000_000),
  endpointCreates: readInteger(env, "DEVELOPER_AREA_ENDPOINT_CREATES", DEFAULT_DEVELOPER_AREA_LIMITS.endpointCreates, 1, 1_000_000),
  replays: readInteger(env, "DEVELOPER_AREA_REPLAYS", DEFAULT_DEVELOPER_AREA_LIMITS.replays, 1, 1_000_000),
  keyChanges: readInteger(env, "DEVELOPER_AREA_KEY_CHANGES", DEFAULT_DEVELOPER_AREA_LIMITS.keyChanges, 1, 1_000_000),
  endpointChanges: readInteger(env, "DEVELOPER_AREA_ENDPOINT_CHANGES", DEFAULT_DEVELOPER_AREA_LIMITS.endpointChanges, 1, 1_000_000),
  sandboxResets: readInteger(env, "DEVELOPER_AREA_SANDBOX_RESETS", DEFAULT_DEVELOPER_AREA_LIMITS.sandboxResets, 1, 1_000_000),
  sandboxSwitches: readInteger(env, "DEVELOPER_AREA_SANDBOX_SWITCHES", DEFAULT_DEVELOPER_AREA_LIMITS.sandboxSwitches, 1, 1_000_000),
  alertAddresses: readInteger(env, "DEVELOPER_AREA_ALERT_ADDRESSES", DEFAULT_DEVELOPER_AREA_LIMITS.alertAddresses, 1, 1_000_000),
  windowMs: readDuration(env, "DEVELOPER_AREA_LIMIT_WINDOW", DEFAULT_DEVELOPER_AREA_LIMITS.windowMs, 1000),
});

/** Signed-in requests an organization may have in flight at once unless `DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION` says otherwise: under half the default pool of 10. */
export const DEFAULT_PAGE_LOADS_PER_ORGANIZATION = 4;

/** Reads the Developer area's environment variables; throws `ConfigError` naming the first bad one. */
export const loadDeveloperAreaConfig = (env: Environment = process.env): DeveloperAreaConfig => ({
  ...readDatabaseSettings(env),
  ...readProcessSettings(env),
  ...readDeveloperAreaAddress(env),
  ...readWebhookEndpointSettings(env),
  ...readApiKeySettings(env),
  frameAncestors: readFrameAncestors(env),
  limits: readDeveloperAreaLimits(env),
  replicas: readReplicaReadSettings(env),
  requestHistory: readRequestHistorySettings(env),
  signatureHeader: readSignatureHeader(env),
  listenersPerOrganization: readInteger(env, "LISTENERS_PER_ORGANIZATION", DEFAULT_LISTENERS_PER_ORGANIZATION, 1, 1000),
  pageLoadsPerOrganization: readInteger(env, "DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION", DEFAULT_PAGE_LOADS_PER_ORGANIZATION, 1, 1000),
  rateLimits: readRateLimits(env),
  trustProxy: readTrustProxy(env),
  alertRecipientsPerOrganization: readInteger(env, "ALERT_RECIPIENTS_PER_ORGANIZATION", DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION, 1, 1000),
  mailServer: readMailServerSettings(env),
});
