import { readWebhookHistorySettings } from "@platter/ops";
import { REQUEST_HISTORY_DEFAULTS } from "../src/request-log.ts";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type DatabaseConnection, openPlatform } from "@platter/persistence";
import {
  createOrganization, createTestDatabase, DIRECT_CONNECTION, NO_REPLICAS, type OrganizationFixture, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase,
} from "@platter/testing";
import { pino } from "pino";
import { expect, inject } from "vitest";
import type { ApiAppOptions } from "../src/app.ts";
import type { ApiConfig } from "../src/config.ts";
import { createApiObservability } from "../src/observability.ts";
import { KeyRateLimits, type RateLimitSettings, UNTHROTTLED } from "@platter/ops";
import type { RequestLogWriter } from "../src/request-log.ts";
import { createApiServer, startApi } from "../src/server.ts";

/** An API served over real HTTP on 127.0.0.1, on a fresh database of its own. */
export interface ApiUnderTest extends ApiClient {
  readonly db: TestDatabase;
  /** Runs SQL on the test database (`?` placeholders): seeding volume and checking what was stored. */
  readonly sql: <Row = Record<string, unknown>>(statement: string, params?: ReadonlyArray<unknown>) => Promise<Row[]>;
  readonly newOrganization: (name?: string, currency?: string) => Promise<OrganizationFixture>;
  readonly close: () => Promise<void>;
}

/** Talks HTTP to one running API. */
export interface ApiClient {
  readonly baseUrl: string;
  /**
   * Sends a request; `key` becomes the bearer header. A string body is sent as it is (raw
   * text), anything else as JSON. Content-Type defaults to application/json when there is a body.
   */
  readonly call: (method: string, path: string, options?: CallOptions) => Promise<ApiResponse>;
}

export interface CallOptions {
  readonly key?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export interface ApiResponse {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body; `undefined` when the body is empty. */
  readonly body: any;
  readonly text: string;
}

/**
 * The rules that hold for every response, checked on every call of the suite: an `x-request-id`
 * header; JSON bodies only; HEAD answered without a body; every error body exactly `{"error": string}`.
 */
const checkEveryResponseRules = (method: string, path: string, response: ApiResponse): void => {
  const what = `${method} ${path} → ${response.status} ${response.text.slice(0, 200)}`;
  expect(response.headers.get("x-request-id"), `x-request-id on ${what}`).toMatch(/\S/);
  if (method === "HEAD") {
    expect(response.text, `HEAD has no body: ${what}`).toBe("");
    return;
  }
  expect(response.headers.get("content-type"), `JSON content type on ${what}`).toMatch(/^application\/json/);
  if (response.status >= 400) {
    expect(response.body !== null && typeof response.body === "object" && !Array.isArray(response.body), `error object on ${what}`).toBe(true);
    expect(Object.keys(response.body), `error body has exactly one key on ${what}`).toEqual(["error"]);
    expect(typeof response.body.error, `error text is a string on ${what}`).toBe("string");
    expect(response.body.error.length, `error text is not empty on ${what}`).toBeGreaterThan(0);
  }
};

const clientFor = (baseUrl: string): ApiClient => ({
  baseUrl,
  call: async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers["authorization"] = `Bearer ${options.key}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path} answered ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    const result: ApiResponse = { status: response.status, headers: response.headers, body: parsed, text };
    checkEveryResponseRules(method, path, result);
    return result;
  },
});

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** An API on a fresh database; `options` as the process would pass them from its configuration. */
export const startApiUnderTest = async (
  rateLimits: RateLimitSettings = UNTHROTTLED,
  options: ApiAppOptions = {},
): Promise<ApiUnderTest> => {
  const db = await createTestDatabase(inject("pgAdminUrl"));
  const logger = pino({ level: "silent" });
  const { server } = createApiServer(db.runtime, logger, new KeyRateLimits(rateLimits), createApiObservability(db.runtime, logger, false), options);
  const baseUrl = await listen(server);
  return {
    db,
    ...clientFor(baseUrl),
    sql: (statement, params = []) => db.orm.em.getConnection().execute(statement, [...params]),
    newOrganization: (name, currency) => createOrganization(db, name, currency),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
      await db.dispose();
    },
  };
};

/**
 * Another API server on an existing database (no process of its own): `rateLimits` and `options`
 * as given, and the organizations' request log written by `requestLog` when given.
 */
export const serveAnother = async (
  db: TestDatabase,
  rateLimits: RateLimitSettings,
  options: ApiAppOptions = {},
  requestLog?: RequestLogWriter,
): Promise<ApiClient & { readonly close: () => Promise<void> }> => {
  const logger = pino({ level: "silent" });
  const observability = createApiObservability(db.runtime, logger, false, requestLog);
  const { server } = createApiServer(db.runtime, logger, new KeyRateLimits(rateLimits), observability, options);
  const baseUrl = await listen(server);
  return {
    ...clientFor(baseUrl),
    close: async () => {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
};

/**
 * Another API instance on an existing database, started the way the process starts
 * (its own platform — pool, runtime — and ports), as after a restart or on a second replica.
 */
export const startAnotherInstance = async (
  db: TestDatabase,
  rateLimits: RateLimitSettings = UNTHROTTLED,
  database: {
    readonly url: string;
    readonly connection: DatabaseConnection;
    readonly poolSize: number;
    /** Read replicas and the read-your-writes window (none by default). */
    readonly replicas?: ApiConfig["replicas"];
  } = { url: db.url, connection: DIRECT_CONNECTION, poolSize: 2 },
): Promise<ApiClient & { readonly stop: () => Promise<void>; readonly opsUrl: string }> => {
  const config = {
    port: 0,
    opsPort: 0,
    host: "127.0.0.1",
    opsHost: "127.0.0.1",
    databaseUrl: database.url,
    dataDir: "unused",
    localPostgresPort: 1, secretKeys: TEST_SECRET_KEYS,
    logLevel: "silent",
    poolSize: database.poolSize,
    shutdownGraceMs: 0,
    rateLimits,
    logRequests: false,
    trustProxy: { kind: "none" },
    ...TEST_DATABASE_LIMITS,
    pooler: database.connection.pooler ?? "none",
    preparedStatements: database.connection.preparedStatements ?? (database.connection.pooler === "transaction" ? "unnamed" : "named"),
    listenUrl: database.connection.listenUrl,
    replicas: database.replicas ?? NO_REPLICAS,
    requestDatabaseTimeoutMs: TEST_DATABASE_LIMITS.statementTimeoutMs,
    requestHistory: REQUEST_HISTORY_DEFAULTS, webhookHistory: readWebhookHistorySettings({}),
    genericPlans: true,
  } as const;
  const platform = await openPlatform(config);
  const api = await startApi(config, pino({ level: "silent" }), platform);
  return {
    ...clientFor(`http://127.0.0.1:${api.port}`),
    opsUrl: `http://127.0.0.1:${api.opsPort}`,
    stop: async () => {
      await api.stop();
      await platform.dispose();
    },
  };
};
