import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, type ApiUnderTest, startAnotherInstance, startApiUnderTest } from "./api-harness.ts";

/**
 * Per-key rate limits: a key over its limit gets 429 with Retry-After and the spec's error body;
 * every answer to a key carries RateLimit-Policy and RateLimit; creates have a lower limit of
 * their own; a flood on one key leaves other keys alone; and several instances share the limit.
 */

const LIMITS = { requestsPerSecond: 10, requestBurst: 20, createsPerSecond: 2, createBurst: 4 };

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

describe("per-key rate limits", () => {
  it("allow a burst, then answer 429 with Retry-After, and tell the key where it stands on every answer", async () => {
    const api = await instance();
    const org = await base.newOrganization();
    const answers = [];
    for (let i = 0; i < 21; i++) answers.push(await api.call("GET", "/v1/me", { key: org.readKey }));
    expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers[0]!.headers.get("ratelimit-policy")).toBe('"requests";q=20;w=2');
    expect(answers[0]!.headers.get("ratelimit")).toMatch(/^"requests";r=19;t=[12]$/);
    expect(answers[19]!.headers.get("ratelimit")).toMatch(/^"requests";r=0;t=[12]$/);
    const refused = answers[20]!;
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatch(/^Too many requests for this API key; retry in [12] s$/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("ratelimit")).toMatch(/^"requests";r=0;t=[12]$/);
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
    expect(read.headers.get("ratelimit-policy")).toBe('"requests";q=20;w=2');
  });

  it("keep a flood on one key from touching another key", async () => {
    const api = await instance();
    const [flooder, bystander] = [await base.newOrganization(), await base.newOrganization()];
    const flood = Promise.all(Array.from({ length: 300 }, () => api.call("GET", "/v1/events", { key: flooder.readKey })));
    const calm = [];
    for (let i = 0; i < 10; i++) calm.push((await api.call("GET", "/v1/events", { key: bystander.readKey })).status);
    const flooded = (await flood).map((a) => a.status);
    expect(calm).toEqual(Array(10).fill(200));
    expect(flooded.filter((s) => s === 200).length).toBeLessThanOrEqual(20);
    expect(flooded.filter((s) => s === 429).length).toBeGreaterThanOrEqual(280);
  });

  it("share a key's limit between the instances live, and take it back when one leaves", async () => {
    const first = await instance();
    const second = await startAnotherInstance(base.db, LIMITS);
    const org = await base.newOrganization();
    // The first hears of the second at its next heartbeat (every 5 s).
    await expect.poll(async () => (await first.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy"), {
      timeout: 8_000, interval: 250,
    }).toBe('"requests";q=10;w=2');
    expect((await second.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy")).toBe('"requests";q=10;w=2');
    await second.stop();
    await expect.poll(async () => (await first.call("GET", "/v1/me", { key: org.readKey })).headers.get("ratelimit-policy"), {
      timeout: 8_000, interval: 250,
    }).toBe('"requests";q=20;w=2');
  }, 30_000);
});
