import { Writable } from "node:stream";
import { openPlatform, type PlatformRuntime } from "@platter/persistence";
import {
  type ControlledPostgres, createOrganization, createTestDatabase, type OrganizationFixture, startControlledPostgres, type TestDatabase,
} from "@platter/persistence/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNTHROTTLED } from "../src/rate-limits.ts";
import { type RunningApi, startApi } from "../src/server.ts";

/**
 * The API when its database goes away, on a PostgreSQL of this test's own that is really stopped
 * (fast and immediate shutdown), frozen (SIGSTOP) and started again: every request is answered
 * at once with 503 and Retry-After (never a 500, never a hang), `/readyz` says 503 within a
 * second, the log says once that the database is gone and once that it is back, requests succeed
 * again as soon as it is, and nothing committed is lost.
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
    port: 0, opsPort: 0, host: "127.0.0.1", databaseUrl: db.url, dataDir: "unused", localPostgresPort: 1, logLevel: "info",
    poolSize: 4, shutdownGraceMs: 0, rateLimits: UNTHROTTLED, logRequests: false, ...LIMITS,
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
});
