import { ApiKeyRepository } from "@platter/persistence";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { type ApiClient, type ApiUnderTest, serveAnother, startAnotherInstance, startApiUnderTest } from "./api-harness.ts";

/**
 * Rate limits: an organization over its limit gets 429 with Retry-After and the spec's error
 * body, whichever of its keys it uses; a key may have a lower limit of its own; every answer to a
 * key carries RateLimit-Policy and RateLimit; creates have a lower limit of their own; a flood on
 * one organization leaves others alone; and several instances share the limits.
 */

const LIMITS = {
  ...UNTHROTTLED, requestsPerSecond: 10, requestBurst: 20, createsPerSecond: 2, createBurst: 4, keyRequestsPerSecond: 10, keyRequestBurst: 20,
};
const POLICIES = '"requests";q=20;w=2, "key";q=20;w=2';

let base: ApiUnderTest;
const started: Array<ApiClient & { readonly stop: () => Promise<void> }> = [];

beforeAll(async () => {
  base = await startApiUnderTest();
});
// Each test's instances leave before the next test starts: the limit is shared between the instances live.
afterEach(async () => {
  await Promise.all(started.splice(0).map((instance) => instance.stop()));
});
afterAll(() => base?.close());

const instance = async () => {
  const api = await startAnotherInstance(base.db, LIMITS);
  started.push(api);
  return api;
};

describe("rate limits", () => {
  it("allow a burst, then answer 429 with Retry-After, and tell the key where it stands on every answer", async () => {
    const api = await instance();
    const org = await base.newOrganization();
    const answers = [];
    for (let i = 0; i < 21; i++) answers.push(await api.call("GET", "/v1/me", { key: org.readKey }));
    expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers[0]!.headers.get("ratelimit-policy")).toBe(POLICIES);
    expect(answers[0]!.headers.get("ratelimit")).toMatch(/^"requests";r=19;t=[12]$/);
    expect(answers[19]!.headers.get("ratelimit")).toMatch(/^"requests";r=0;t=[12]$/);
    const refused = answers[20]!;
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Too many requests for this API key; retry in [12] s$/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The key's own count comes first (before the lookup), so with equal limits it is the one that refuses.
    expect(refused.headers.get("ratelimit")).toMatch(/^"key";r=0;t=[12]$/);
    // After the wait it says, the key is served again.
    await new Promise((done) => setTimeout(done, Number(refused.headers.get("retry-after")) * 1000 + 100));
    expect((await api.call("GET", "/v1/me", { key: org.readKey })).status).toBe(200);
  });

  it("limit creates lower than reads, and a refused create stores nothing", async () => {
    const api = await instance();
    const org = await base.newOrganization();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await api.call("POST", "/v1/clients", { key: org.writeKey, body: { name: `Client ${i}` } })).status);
    expect(statuses).toEqual([201, 201, 201, 201, 429]);
    const [stored] = await base.sql<{ n: number }>("select count(*)::int as n from clients where organization_id = ?", [org.id]);
    expect(stored!.n).toBe(4);
    const read = await api.call("GET", "/v1/clients", { key: org.writeKey });
    expect(read.status).toBe(200);
    expect(read.headers.get("ratelimit-policy")).toBe(POLICIES);
  });

  it("keep a flood on one organization from touching another organization", async () => {
    const api = await instance();
    const [flooder, bystander] = [await base.newOrganization(), await base.newOrganization()];
    const floodStarted = Date.now();
    const flood = Promise.all(Array.from({ length: 300 }, () => api.call("GET", "/v1/events", { key: flooder.readKey })));
    const calm = [];
    for (let i = 0; i < 10; i++) calm.push((await api.call("GET", "/v1/events", { key: bystander.readKey })).status);
    const flooded = (await flood).map((a) => a.status);
    // The burst, and what the rate (10 a second) refilled while the flood was answered (a loaded host answers it slowly).
    const allowed = 20 + Math.ceil(10 * (Date.now() - floodStarted) / 1000);
    expect(calm).toEqual(Array(10).fill(200));
    expect(flooded.filter((s) => s === 200).length).toBeLessThanOrEqual(allowed);
    expect(flooded.filter((s) => s === 429).length).toBeGreaterThanOrEqual(300 - allowed);
  });

  it("share a key's limit between the instances live, and take it back when one leaves", async () => {
    const first = await instance();
    const second = await startAnotherInstance(base.db, LIMITS);
    const org = await base.newOrganization();
    // The first hears of the second at its next heartbeat (every 5 s).
    await expect.poll(async () => (await first.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy"), {
      timeout: 8_000, interval: 250,
    }).toBe('"requests";q=10;w=2, "key";q=10;w=2');
    expect((await second.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy")).toBe('"requests";q=10;w=2, "key";q=10;w=2');
    await second.stop();
    await expect.poll(async () => (await first.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy"), {
      timeout: 8_000, interval: 250,
    }).toBe(POLICIES);
  }, 30_000);
});

/** `n` more read-only keys of `org`. */
const moreKeys = async (org: { scope: Parameters<ApiKeyRepository["Service"]["create"]>[0] }, n: number): Promise<string[]> => {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) keys.push((await base.db.run(ApiKeyRepository.use((k) => k.create(org.scope, "read")))).key);
  return keys;
};

describe("an organization's limit", () => {
  // A window of 20 s: the whole burst below lands in one window, however slow the machine.
  const ORGANIZATION = { ...UNTHROTTLED, requestsPerSecond: 1, requestBurst: 20, keyRequestsPerSecond: 1, keyRequestBurst: 20 };

  it("holds five keys sending together to the organization's limit, and leaves another organization alone", async () => {
    const api = await serveAnother(base.db, ORGANIZATION);
    try {
      const [org, other] = [await base.newOrganization(), await base.newOrganization()];
      const keys = [org.readKey, org.writeKey, ...(await moreKeys(org, 3))];
      const together = Promise.all(keys.flatMap((key) => Array.from({ length: 20 }, () => api.call("GET", "/v1/events", { key }))));
      const calm = [];
      for (let i = 0; i < 10; i++) calm.push(await api.call("GET", "/v1/events", { key: other.readKey }));
      const answers = await together;
      expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
      const refused = answers.filter((a) => a.status === 429);
      expect(refused).toHaveLength(80);
      for (const answer of refused) {
        expect(answer.body.error).toMatch(/^Too many requests for this organization; retry in \d+ s$/);
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(answer.headers.get("ratelimit-policy")).toBe('"requests";q=20;w=20, "key";q=20;w=20');
        expect(answer.headers.get("ratelimit")).toMatch(/^"requests";r=0;t=\d+$/);
      }
      expect(calm.map((a) => a.status)).toEqual(Array(10).fill(200));
      expect(calm[9]!.headers.get("ratelimit")).toMatch(/^"requests";r=10;t=\d+$/);
    } finally {
      await api.close();
    }
  });

  it("lets a key have a lower limit of its own, refused before its organization's", async () => {
    const api = await serveAnother(base.db, { ...ORGANIZATION, keyRequestBurst: 5 });
    try {
      const org = await base.newOrganization();
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push(await api.call("GET", "/v1/me", { key: org.readKey }));
      expect(statuses.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
      expect(statuses[5]!.body.error).toMatch(/^Too many requests for this API key; retry in \d+ s$/);
      expect(statuses[5]!.headers.get("ratelimit-policy")).toBe('"key";q=5;w=5');
      // The organization still has room: its other key is served.
      const other = await api.call("GET", "/v1/me", { key: org.writeKey });
      expect(other.status).toBe(200);
      expect(other.headers.get("ratelimit-policy")).toBe('"requests";q=20;w=20, "key";q=5;w=5');
      // The tightest count is reported: the new key's own (4 left) rather than the organization's (14 left).
      expect(other.headers.get("ratelimit")).toMatch(/^"key";r=4;t=\d+$/);
    } finally {
      await api.close();
    }
  });
});
