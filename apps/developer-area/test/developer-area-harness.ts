import { makeSignInLink } from "@platter/application";
import { createServer, type Server } from "node:http";
import type { RateLimitSettings, WebhookEndpointSettings } from "@platter/ops";
import type { SignInRequester } from "@platter/domain";
import { openPlatform } from "@platter/persistence";
import { createTestDatabase, DIRECT_CONNECTION, freePort, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import type { Page } from "playwright-core";
import { type AreaRoute, createDeveloperAreaApp, type DeveloperAreaConfig, type DeveloperAreaLimits } from "../src/index.ts";

/**
 * The Developer area as tests meet it: a fresh database, the area listening on 127.0.0.1 with its
 * public origin set to that address, and helpers that sign in and send forms as a browser would.
 */

export interface RunningArea {
  readonly db: TestDatabase;
  /** `http://127.0.0.1:<port>`: the area's address and its configured public origin. */
  readonly origin: string;
  /** A new sign-in link of organization `organizationId`. */
  readonly link: (organizationId: number, requestedBy?: SignInRequester) => Promise<string>;
  /** Ends the open `platter listen` streams as a stopping server does (new ones are refused from then on). */
  readonly endStreams: () => void;
  /** Every method and path pattern the area's router serves. */
  readonly routes: ReadonlyArray<AreaRoute>;
  /** Every POST route of the area's router, with the limit its registration declared. */
  readonly postRoutes: ReturnType<typeof createDeveloperAreaApp>["postRoutes"];
  readonly stop: () => Promise<void>;
}

/** Listens on a free port of 127.0.0.1 with `handler`; resolves with the server and its origin. */
export const listen = async (handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; origin: string }> => {
  const port = await freePort();
  const server = createServer(handler);
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  return { server, origin: `http://127.0.0.1:${port}` };
};

const close = (server: Server) =>
  new Promise<void>((done) => {
    server.closeAllConnections();
    server.close(() => done());
  });

/**
 * Starts the area on a new test database; `frameAncestors` as `DEVELOPER_AREA_FRAME_ANCESTORS`
 * would set it, `webhooks` as `WEBHOOK_ALLOW_PRIVATE_NETWORKS`, `WEBHOOK_SECRET_OVERLAP` and
 * `WEBHOOK_ENDPOINTS_PER_ORGANIZATION` would, and `limits` as the `DEVELOPER_AREA_*` limits would
 * (their defaults when not given). With `replicas`, the area runs on a platform of its own whose
 * pages read from the replica `replicaUrlOf` gives for the test database (`DATABASE_REPLICA_URLS`).
 */
export const startArea = async (
  adminUrl: string,
  frameAncestors = "'self'",
  webhooks: Partial<WebhookEndpointSettings> & {
    readonly limits?: DeveloperAreaLimits;
    /** `API_KEYS_PER_ORGANIZATION`. */
    readonly apiKeysPerOrganization?: number;
    /** `LISTENERS_PER_ORGANIZATION`. */
    readonly listenersPerOrganization?: number;
    /** `RATE_LIMIT*`, for the CLI's routes (and `RATE_LIMIT_AUTH_FAILURES*` for session and sign-in link lookups). */
    readonly rateLimits?: RateLimitSettings;
    /** `TRUST_PROXY`. */
    readonly trustProxy?: DeveloperAreaConfig["trustProxy"];
    /** `DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION`. */
    readonly pageLoadsPerOrganization?: number;
    /** `ALERT_RECIPIENTS_PER_ORGANIZATION`. */
    readonly alertRecipientsPerOrganization?: number;
    /** `SMTP_URL` and `SMTP_FROM`. */
    readonly mailServer?: DeveloperAreaConfig["mailServer"];
    readonly replicas?: Omit<DeveloperAreaConfig["replicas"], "urls"> & { readonly replicaUrlOf: (databaseUrl: string) => string };
  } = {},
): Promise<RunningArea> => {
  const db = await createTestDatabase(adminUrl);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const { replicas: replicaOptions, ...settings } = webhooks;
  const replicas = replicaOptions === undefined ? undefined : { ...replicaOptions, urls: [replicaOptions.replicaUrlOf(db.url)] };
  const platform = replicas === undefined
    ? undefined
    : await openPlatform({ databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, secretKeys: TEST_SECRET_KEYS, poolSize: 4, ...TEST_DATABASE_LIMITS, ...DIRECT_CONNECTION, replicas });
  const app = createDeveloperAreaApp(
    platform ?? db.runtime,
    { developerAreaUrl: origin, frameAncestors, ...settings, ...(replicas === undefined ? {} : { replicas }) },
    pino({ level: "silent" }),
  );
  const server = createServer(app.callback());
  await new Promise<void>((done) => server.listen(port, "127.0.0.1", done));
  return {
    db,
    origin,
    link: async (organizationId, requestedBy = "cli") => (await db.run(makeSignInLink(origin, organizationId, requestedBy))).url,
    endStreams: () => app.listenerStreams.endAll(),
    routes: app.routes,
    postRoutes: app.postRoutes,
    stop: async () => {
      app.listenerStreams.endAll();
      await close(server);
      await platform?.dispose();
      await db.dispose();
    },
  };
};

/** A browser's session in tests: the cookie header to send and the form token its pages carry. */
export interface TestSession {
  readonly cookie: string;
  readonly formToken: string;
}

/** The `name=value` part of a Set-Cookie header. */
export const cookiePair = (setCookie: string): string => setCookie.split(";")[0]!;

/** The form token of the first form on a page. */
export const formTokenIn = (page: string): string => {
  const match = /name="form_token" value="([^"]+)"/.exec(page);
  if (match === null) throw new Error(`no form token on the page:\n${page}`);
  return match[1]!;
};

/** Presses the "Continue" button of the page `link` opens, as a browser would (the area's Origin, no session): the answer. */
export const useLink = (area: RunningArea, link: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(link, { method: "POST", redirect: "manual", headers: { origin: area.origin, ...headers } });

/** Opens `link` as a browser would and continues, then the page it leads to: the session's cookie and form token. */
export const signIn = async (area: RunningArea, link: string): Promise<TestSession> => {
  const shown = await fetch(link, { redirect: "manual" });
  if (shown.status !== 200) throw new Error(`the sign-in link's page answered ${shown.status}`);
  const opened = await useLink(area, link);
  if (opened.status !== 303) throw new Error(`sign-in answered ${opened.status}`);
  const cookie = cookiePair(opened.headers.get("set-cookie")!);
  const page = await fetch(`${area.origin}/api-keys`, { headers: { cookie } });
  if (page.status !== 200) throw new Error(`the keys page answered ${page.status}`);
  return { cookie, formToken: formTokenIn(await page.text()) };
};

/** Sends a form as the area's own page would (its Origin, the session's cookie), with `fields` as given. */
export const postForm = (
  area: RunningArea,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> =>
  fetch(area.origin + path, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: area.origin, ...headers },
    body: new URLSearchParams(fields).toString(),
  });

/** In a browser: opens `link` and presses its page's "Continue" (opening it alone signs nobody in), then waits for the keys page. */
export const signInInBrowser = async (page: Page, link: string): Promise<void> => {
  await page.goto(link);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL((url) => url.pathname === "/api-keys");
};
