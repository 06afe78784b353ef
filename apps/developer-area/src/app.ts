import Koa from "koa";
import type { Logger } from "pino";
import {
  AddressFailures, clientAddressResolver, readRateLimits, readRequestHistorySettings, readSignatureHeader, readTrustProxy,
  readWebhookEndpointSettings,
} from "@platter/ops";
import { DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION, DEFAULT_API_KEYS_PER_ORGANIZATION, DEFAULT_LISTENERS_PER_ORGANIZATION, UnknownPage } from "@platter/domain";
import { smtpMailSender } from "@platter/webhooks";
import type { RequestRuntime } from "@platter/persistence";
import { serveAssets } from "./assets.ts";
import { DEFAULT_DEVELOPER_AREA_LIMITS, DEFAULT_PAGE_LOADS_PER_ORGANIZATION, type DeveloperAreaConfig } from "./config.ts";
import { FailedLookups } from "./failed-lookups.ts";
import { PageLoads } from "./page-loads.ts";
import { errorPages } from "./error-pages.ts";
import { OrganizationLimits, postRouteLimits, type RouteLimit } from "./organization-limits.ts";
import { addListenRoutes } from "./listen-routes.ts";
import type { ListenerStreams } from "./listener-streams.ts";
import { createRouter } from "./routes.ts";
import { securityHeaders } from "./security-headers.ts";

const SERVED_METHODS = new Set(["GET", "POST"]);

/** Where the area is served, as the app needs it. */
export type DeveloperAreaSettings = Pick<DeveloperAreaConfig, "developerAreaUrl" | "frameAncestors">
  /** The webhook settings and the per-organization limits, each by default as an unset variable reads. */
  & Partial<Pick<DeveloperAreaConfig,
    "allowPrivateNetworks" | "secretOverlapMs" | "endpointsPerOrganization" | "apiKeysPerOrganization" | "limits" | "replicas" | "requestHistory"
    | "signatureHeader" | "listenersPerOrganization" | "rateLimits" | "trustProxy" | "pageLoadsPerOrganization" | "alertRecipientsPerOrganization"
    | "mailServer">>;

/** One route of the area: a method it serves (GET or POST) and the router's path pattern (`/webhooks/:id`). */
export interface AreaRoute {
  readonly method: string;
  readonly path: string;
}

const WEBHOOK_DEFAULTS = readWebhookEndpointSettings({});

/**
 * The Developer area application. Request path: security headers → error pages → assets → method
 * guard (GET and POST) → router → unknown page. Unknown paths and methods are the 404 page. Its
 * `listenerStreams` are the open `platter listen` streams, which the server ends when it stops; its
 * `routes` every method and path the router serves (what the random-input test sends to), and
 * `postRoutes` every POST route of its router with the limit its registration declared.
 */
export const createDeveloperAreaApp = (
  runtime: RequestRuntime, settings: DeveloperAreaSettings, logger: Logger,
): Koa & {
  readonly listenerStreams: ListenerStreams;
  readonly routes: ReadonlyArray<AreaRoute>;
  readonly postRoutes: () => ReadonlyArray<{ readonly path: string; readonly limit: RouteLimit | undefined }>;
} => {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const limits = new OrganizationLimits(settings.limits ?? DEFAULT_DEVELOPER_AREA_LIMITS);
  const rateLimits = settings.rateLimits ?? readRateLimits({});
  const trustProxy = settings.trustProxy ?? readTrustProxy({});
  // One count of failed authentications per client address for the CLI routes' keys, session cookies and sign-in links.
  const addressFailures = new AddressFailures(rateLimits.authFailures, rateLimits.authFailureWindowSeconds);
  // One mailer for the Alerts page and `/cli/alerts`: each added address is mailed its confirmation link.
  const alerts = {
    recipientsPerOrganization: settings.alertRecipientsPerOrganization ?? DEFAULT_ALERT_RECIPIENTS_PER_ORGANIZATION,
    mailer: settings.mailServer === undefined ? undefined : smtpMailSender(settings.mailServer),
  };
  const router = createRouter(runtime, {
    origin: settings.developerAreaUrl,
    cookies: { secure: settings.developerAreaUrl.startsWith("https:") },
    webhooks: {
      allowPrivateNetworks: settings.allowPrivateNetworks ?? WEBHOOK_DEFAULTS.allowPrivateNetworks,
      secretOverlapMs: settings.secretOverlapMs ?? WEBHOOK_DEFAULTS.secretOverlapMs,
      endpointsPerOrganization: settings.endpointsPerOrganization ?? WEBHOOK_DEFAULTS.endpointsPerOrganization,
    },
    apiKeysPerOrganization: settings.apiKeysPerOrganization ?? DEFAULT_API_KEYS_PER_ORGANIZATION,
    alerts,
    limits,
    requestHistory: settings.requestHistory ?? readRequestHistorySettings({}),
    lookups: new FailedLookups(addressFailures, clientAddressResolver(trustProxy)),
    pageLoads: new PageLoads(settings.pageLoadsPerOrganization ?? DEFAULT_PAGE_LOADS_PER_ORGANIZATION),
    readYourWritesMs: settings.replicas === undefined || settings.replicas.urls.length === 0 ? undefined : settings.replicas.readYourWritesMs,
  });
  const listenerStreams = addListenRoutes(router, runtime, {
    signatureHeader: settings.signatureHeader ?? readSignatureHeader({}),
    listenersPerOrganization: settings.listenersPerOrganization ?? DEFAULT_LISTENERS_PER_ORGANIZATION,
    limits,
    rateLimits,
    addressFailures,
    trustProxy,
    origin: settings.developerAreaUrl,
    alerts,
  }, logger);
  app.use(securityHeaders(settings.frameAncestors));
  app.use(errorPages(logger));
  // Assets answer HEAD too; pages do not, so a link checker's HEAD never uses up a sign-in link.
  app.use(serveAssets);
  app.use(async (ctx, next) => {
    if (!SERVED_METHODS.has(ctx.method)) throw new UnknownPage();
    await next();
  });
  app.use(router.routes());
  app.use(async (ctx) => {
    if (ctx.matched === undefined || ctx.matched.length === 0 || ctx.body === undefined) throw new UnknownPage();
  });
  const routes = router.stack.flatMap((layer) =>
    layer.methods.filter((method) => SERVED_METHODS.has(method)).map((method) => ({ method, path: String(layer.path) })));
  return Object.assign(app, { listenerStreams, routes, postRoutes: () => postRouteLimits(router) });
};
