import { readWebhookHistorySettings } from "@platter/ops";
import { REQUEST_HISTORY_DEFAULTS } from "../src/request-log.ts";
import { Writable } from "node:stream";
import { openPlatform, type PlatformRuntime } from "@platter/persistence";
import { createOrganization, createTestDatabase, DIRECT_CONNECTION, TEST_DATABASE_LIMITS, TEST_SECRET_KEYS, type TestDatabase } from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { type RunningApi, startApi } from "../src/server.ts";

/**
 * What an operator watches: the API's ops port serves Prometheus metrics (request durations by
 * route and status, requests in flight, the pool, 429s, 503s), and every request is one JSON log
 * line with its method, route, status, duration, request id, organization and key id, never the
 * key; `REQUEST_LOG=false` turns the lines off.
 */

let db: TestDatabase;
const running: Array<{ api: RunningApi; platform: PlatformRuntime }> = [];

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(async () => {
  for (const { api, platform } of running) {
    await api.stop();
    await platform.dispose();
  }
  await db?.dispose();
});

const start = async (logRequests: boolean) => {
  const lines: any[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString("utf8").split("\n").filter((l) => l.trim() !== "")) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = {
    port: 0, opsPort: 0, host: "127.0.0.1", opsHost: "127.0.0.1", databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, secretKeys: TEST_SECRET_KEYS, logLevel: "info",
    poolSize: 2, shutdownGraceMs: 0, logRequests, ...TEST_DATABASE_LIMITS, ...DIRECT_CONNECTION,
    rateLimits: { ...UNTHROTTLED, requestsPerSecond: 3, requestBurst: 3, createsPerSecond: 3, createBurst: 3, keyRequestsPerSecond: 3, keyRequestBurst: 3 },
    trustProxy: { kind: "none" }, requestDatabaseTimeoutMs: TEST_DATABASE_LIMITS.statementTimeoutMs,
    requestHistory: REQUEST_HISTORY_DEFAULTS, webhookHistory: readWebhookHistorySettings({}), genericPlans: true,
  } as const;
  const platform = await openPlatform(config);
  const api = await startApi(config, pino({ level: "info" }, sink), platform);
  running.push({ api, platform });
  const get = (path: string, key?: string) =>
    fetch(`http://127.0.0.1:${api.port}${path}`, { headers: key ? { authorization: `Bearer ${key}`, "x-request-id": "watched-1" } : {} });
  return { api, lines, get, metrics: async () => (await fetch(`http://127.0.0.1:${api.opsPort}/metrics`)).text() };
};

const sample = (text: string, name: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
};

describe("the API's metrics and request log", () => {
  it("counts and times requests by route and status, 429s, the pool, and logs one line per request without the key", async () => {
    const watched = await start(true);
    const org = await createOrganization(db, "Watched Caterers");
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await watched.get("/v1/me", org.readKey)).status);
    statuses.push((await watched.get("/v1/nowhere", org.readKey)).status);
    statuses.push((await watched.get("/v1/me")).status);
    expect(statuses).toEqual([200, 200, 200, 429, 404, 401]);

    const text = await watched.metrics();
    expect(sample(text, 'platter_http_request_duration_seconds_count{method="GET",route="/v1/me",status="200"}')).toBe(3);
    expect(sample(text, 'platter_http_request_duration_seconds_count{method="GET",route="/v1/me",status="429"}')).toBe(1);
    expect(sample(text, 'platter_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(sample(text, "platter_http_rate_limited_total")).toBe(1);
    expect(sample(text, "platter_http_database_unavailable_total")).toBe(0);
    expect(sample(text, "platter_http_requests_in_flight")).toBe(0);
    expect(sample(text, 'platter_database_pool_connections{state="open"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'platter_database_pool_connections{state="waiting"}')).toBe(0);

    const requests = watched.lines.filter((line) => line.msg === "request");
    expect(requests).toHaveLength(6);
    expect(requests[0]).toMatchObject({
      level: 30, method: "GET", route: "/v1/me", status: 200, requestId: "watched-1", organizationId: org.id, keyId: org.readKeyId,
    });
    expect(typeof requests[0].durationMs).toBe("number");
    expect(requests.map((line) => line.status)).toEqual([200, 200, 200, 429, 404, 401]);
    expect(JSON.stringify(watched.lines)).not.toContain(org.readKey);
  });

  it("writes no request lines with REQUEST_LOG=false", async () => {
    const quiet = await start(false);
    const org = await createOrganization(db, "Quiet Caterers");
    expect((await quiet.get("/v1/me", org.readKey)).status).toBe(200);
    expect(quiet.lines.filter((line) => line.msg === "request")).toEqual([]);
    expect(sample(await quiet.metrics(), 'platter_http_request_duration_seconds_count{method="GET",route="/v1/me",status="200"}')).toBe(1);
  });
});
