import { readWebhookHistorySettings } from "@platter/ops";
import { REQUEST_HISTORY_DEFAULTS, RequestLogWriter } from "../src/request-log.ts";
import { Writable } from "node:stream";
import { databasePoolStats, openPlatform, type PlatformRuntime } from "@platter/persistence";
import {
  type ControlledPostgres, createOrganization, createTestDatabase, DIRECT_CONNECTION, type OrganizationFixture, startControlledPostgres, type TestDatabase,
  TEST_SECRET_KEYS, TEST_SECRET_KEYS_TEXT,
} from "@platter/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadApiConfig } from "../src/config.ts";
import { UNTHROTTLED } from "@platter/ops";
import { type RunningApi, startApi } from "../src/server.ts";

/**
 * The API when its database goes away, on a PostgreSQL of this test's own that is really stopped
 * (fast and immediate shutdown), frozen (SIGSTOP) and started again: every request is answered
 * at once with 503 and Retry-After (never a 500, never a hang), `/readyz` says 503 within a
 * second, the log says once that the database is gone and once that it is back, requests succeed
 * again as soon as it is, and nothing committed is lost. And the promise to users: with the
 * default settings, under load, every request is answered within 5 s while the server is frozen
 * for 10 s.
 */

const LIMITS = { connectTimeoutMs: 500, statementTimeoutMs: 1_000, startTimeoutMs: 10_000 };

let postgres: ControlledPostgres;
let db: TestDatabase;
let org: OrganizationFixture;
let platform: PlatformRuntime;
let api: RunningApi;
const logLines: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  postgres = await startControlledPostgres();
  db = await createTestDatabase(postgres.adminUrl);
  org = await createOrganization(db, "Outage Caterers");
  const config = {
    port: 0, opsPort: 0, host: "127.0.0.1", opsHost: "127.0.0.1", databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, secretKeys: TEST_SECRET_KEYS, logLevel: "info",
    poolSize: 4, shutdownGraceMs: 0, rateLimits: UNTHROTTLED, logRequests: false, trustProxy: { kind: "none" },
    requestDatabaseTimeoutMs: 4_000, ...LIMITS, ...DIRECT_CONNECTION,
    requestHistory: REQUEST_HISTORY_DEFAULTS, webhookHistory: readWebhookHistorySettings({}), genericPlans: true,
  } as const;
  platform = await openPlatform(config);
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      for (const line of chunk.toString("utf8").split("\n").filter((l) => l.trim() !== "")) logLines.push(JSON.parse(line));
      done();
    },
  });
  api = await startApi(config, pino({ level: "info" }, sink), platform);
}, 60_000);

afterAll(async () => {
  await api?.stop();
  await platform?.dispose();
  await db?.dispose().catch(() => {});
  await postgres?.dispose();
});

const base = () => `http://127.0.0.1:${api.port}`;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
  ms: number;
}

const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
  const began = performance.now();
  const response = await fetch(base() + path, {
    method,
    headers: { authorization: `Bearer ${org.writeKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json(), ms: performance.now() - began };
};

const ready = async (): Promise<{ status: number; ms: number }> => {
  const began = performance.now();
  const response = await fetch(`http://127.0.0.1:${api.opsPort}/readyz`, { signal: AbortSignal.timeout(10_000) });
  await response.text();
  return { status: response.status, ms: performance.now() - began };
};

/** Requests of every kind during an outage, in a bounded loop: all must be a prompt 503. */
const duringOutage = async () => {
  const answers: Answer[] = [];
  for (let round = 0; round < 3; round++) {
    answers.push(await call("GET", "/v1/me"));
    answers.push(await call("GET", "/v1/clients"));
    answers.push(await call("POST", "/v1/clients", { name: `Lost ${round}` }));
  }
  return answers;
};

const expectUnavailable = (answers: Answer[]) => {
  for (const answer of answers) {
    expect(answer).toMatchObject({ status: 503, retryAfter: "1", body: { error: "The service is temporarily unavailable; retry shortly" } });
    // connect or statement timeout, and then some: never a hang
    expect(answer.ms).toBeLessThan(LIMITS.statementTimeoutMs + LIMITS.connectTimeoutMs + 1_500);
  }
};

const waitUntilServing = async () => {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if ((await call("GET", "/v1/me").catch(() => undefined))?.status === 200) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error("the API did not serve again within 15 s");
};

const count = (message: RegExp) => logLines.filter((line) => message.test(line.msg)).length;

describe("a database outage", () => {
  it.each(["fast", "immediate"] as const)("during a %s shutdown: prompt 503s, /readyz 503, then serving again, nothing lost", async (mode) => {
    const created = await call("POST", "/v1/clients", { name: `Before ${mode}` });
    expect(created.status).toBe(201);
    const downBefore = count(/^database unavailable/);
    const upBefore = count(/^database available again/);

    await postgres.stop(mode);
    expectUnavailable(await duringOutage());
    const probe = await ready();
    expect(probe.status).toBe(503);
    expect(probe.ms).toBeLessThan(1_000);

    await postgres.start();
    await waitUntilServing();
    const listed = (await call("GET", "/v1/clients?limit=100")).body.data as Array<{ id: number; name: string }>;
    expect(listed).toContainEqual(expect.objectContaining({ id: created.body.id, name: `Before ${mode}` }));
    expect(listed.filter((client) => client.name.startsWith("Lost"))).toEqual([]);
    expect((await ready()).status).toBe(200);
    // Said once that it went, once that it is back; never as a 500.
    await expect.poll(() => count(/^database available again/), { timeout: 5_000 }).toBe(upBefore + 1);
    expect(count(/^database unavailable/)).toBe(downBefore + 1);
    expect(count(/unhandled error/)).toBe(0);
  }, 60_000);

  it("drops the request log's batch as failed while the database is down, never splitting it as if rows were refused", async () => {
    const writer = new RequestLogWriter(platform, pino({ level: "silent" }), REQUEST_HISTORY_DEFAULTS);
    const record = (requestId: string) => ({
      organization_id: org.id, api_key_id: org.readKeyId, at: new Date().toISOString(), method: "GET", route: "/v1/events/:id",
      status: 404, duration_ms: 1, request_id: requestId, error: "Not found",
    });
    for (let i = 0; i < 50; i++) writer.add(record(`req_outage_${i}`));
    await postgres.stop("fast");
    try {
      await writer.flush();
    } finally {
      await postgres.start();
      await waitUntilServing();
    }
    expect(writer.drops).toEqual({ full: 0, organizationShare: 0, failed: 50, refused: 0 });
    writer.add(record("req_after_outage"));
    await writer.flush();
    expect(writer.written).toBe(1);
  }, 60_000);

  it("while the server is frozen: every request and /readyz answer within their bounds, then serving again", async () => {
    await postgres.freeze();
    try {
      const answers = await Promise.all([call("GET", "/v1/me"), call("GET", "/v1/clients"), call("POST", "/v1/clients", { name: "Frozen" })]);
      expectUnavailable(answers);
      const probe = await ready();
      expect(probe.status).toBe(503);
      expect(probe.ms).toBeLessThan(1_000);
    } finally {
      await postgres.thaw();
    }
    await waitUntilServing();
    expect(count(/unhandled error/)).toBe(0);
  }, 60_000);

  it("frozen for 10 s under load, with the default settings: every request is answered within 5 s", async () => {
    const defaults = loadApiConfig({ DATABASE_URL: db.url, SECRET_ENCRYPTION_KEYS: TEST_SECRET_KEYS_TEXT, HOST: "127.0.0.1", PORT: "0", OPS_PORT: "0", LOG_LEVEL: "silent", REQUEST_LOG: "false" });
    const config = { ...defaults, rateLimits: UNTHROTTLED, shutdownGraceMs: 0 };
    const loaded = await openPlatform(config);
    const loadedApi = await startApi(config, pino({ level: "silent" }), loaded);
    try {
      const answers: Array<Answer | { status: "no answer"; error: string; ms: number }> = [];
      const request = async (i: number) => {
        const began = performance.now();
        const post = i % 3 === 2;
        try {
          const response = await fetch(`http://127.0.0.1:${loadedApi.port}${i % 3 === 0 ? "/v1/me" : "/v1/clients"}`, {
            method: post ? "POST" : "GET",
            headers: { authorization: `Bearer ${org.writeKey}`, ...(post ? { "content-type": "application/json" } : {}) },
            body: post ? JSON.stringify({ name: `Load ${i}` }) : undefined,
            signal: AbortSignal.timeout(20_000),
          });
          answers.push({ status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json(), ms: performance.now() - began });
        } catch (error) {
          answers.push({ status: "no answer", error: String(error), ms: performance.now() - began });
        }
      };
      let running = true;
      let sent = 0;
      // More concurrent requests than the pool has connections (10), so some wait for one.
      const workers = Array.from({ length: 24 }, async () => {
        while (running) await request(sent++);
      });
      await new Promise((done) => setTimeout(done, 1_000));
      const answeredBeforeFreeze = answers.length;
      await postgres.freeze();
      try {
        await new Promise((done) => setTimeout(done, 10_000));
      } finally {
        await postgres.thaw();
      }
      await new Promise((done) => setTimeout(done, 2_000));
      running = false;
      await Promise.all(workers);

      expect(answeredBeforeFreeze).toBeGreaterThan(0);
      expect(answers.filter((a) => a.status === "no answer")).toEqual([]);
      expect(answers.filter((a) => ![200, 201, 503].includes(a.status as number))).toEqual([]);
      const unavailable = answers.filter((a) => a.status === 503) as Answer[];
      expect(unavailable.length).toBeGreaterThan(0);
      for (const answer of unavailable) {
        expect(answer).toMatchObject({ retryAfter: "1", body: { error: "The service is temporarily unavailable; retry shortly" } });
      }
      const slowest = Math.max(...answers.map((a) => a.ms));
      expect(slowest).toBeLessThan(5_000);
      // Every connection caught by the freeze went back to the pool (none held by a transaction that could not roll back).
      await expect.poll(async () => {
        const pool = await loaded.runPromise(databasePoolStats);
        return pool.open - pool.idle;
      }, { timeout: 10_000, interval: 200 }).toBe(0);
    } finally {
      await loadedApi.stop();
      await loaded.dispose();
    }
    await waitUntilServing();
    expect(count(/unhandled error/)).toBe(0);
  }, 60_000);
});
