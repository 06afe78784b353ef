import Koa from "koa";
import type { Logger } from "pino";
import { readRequestHistorySettings, readWebhookEndpointSettings } from "@platter/ops";
import type { RequestRuntime } from "@platter/persistence";
import { serveAssets } from "./assets.ts";
import { DEFAULT_DEVELOPER_AREA_LIMITS, type DeveloperAreaConfig } from "./config.ts";
import { errorPages } from "./error-pages.ts";
import { UnknownPage } from "./page-errors.ts";
import { OrganizationLimits } from "./organization-limits.ts";
import { createRouter } from "./routes.ts";
import { securityHeaders } from "./security-headers.ts";

const SERVED_METHODS = new Set(["GET", "POST"]);

/** Where the area is served, as the app needs it. */
export type DeveloperAreaSettings = Pick<DeveloperAreaConfig, "developerAreaUrl" | "frameAncestors">
  /** The webhook settings and the per-organization limits, each by default as an unset variable reads. */
  & Partial<Pick<DeveloperAreaConfig, "allowPrivateNetworks" | "secretOverlapMs" | "endpointsPerOrganization" | "limits" | "replicas" | "requestHistory">>;

const WEBHOOK_DEFAULTS = readWebhookEndpointSettings({});

/**
 * The Developer area application. Request path: security headers → error pages → assets → method
 * guard (GET and POST) → router → unknown page. Unknown paths and methods are the 404 page.
 */
export const createDeveloperAreaApp = (runtime: RequestRuntime, settings: DeveloperAreaSettings, logger: Logger): Koa => {
  const app = new Koa();
  app.proxy = false;
  app.silent = true;
  const router = createRouter(runtime, {
    origin: settings.developerAreaUrl,
    cookies: { secure: settings.developerAreaUrl.startsWith("https:") },
    webhooks: {
      allowPrivateNetworks: settings.allowPrivateNetworks ?? WEBHOOK_DEFAULTS.allowPrivateNetworks,
      secretOverlapMs: settings.secretOverlapMs ?? WEBHOOK_DEFAULTS.secretOverlapMs,
      endpointsPerOrganization: settings.endpointsPerOrganization ?? WEBHOOK_DEFAULTS.endpointsPerOrganization,
    },
    limits: new OrganizationLimits(settings.limits ?? DEFAULT_DEVELOPER_AREA_LIMITS),
    requestHistory: settings.requestHistory ?? readRequestHistorySettings({}),
    readYourWritesMs: settings.replicas === undefined || settings.replicas.urls.length === 0 ? undefined : settings.replicas.readYourWritesMs,
  });
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
  return app;
};
