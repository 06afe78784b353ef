import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError, ConnectionError, NotFoundError, RateLimitError } from "../src/index.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * Retries, observed through the fault proxy: which failures are retried, how many times, and that
 * a retried create carries the same Idempotency-Key. Faults use `Retry-After: 0` where the wait
 * itself is not the point, so the suite stays quick; no test asserts on time.
 */

let bed: SdkTestbed;
let proxy: FaultProxy;

beforeAll(async () => {
  bed = await startSdkTestbed();
  proxy = await startFaultProxy(bed.baseUrl);
});
beforeEach(() => proxy.reset());
afterAll(async () => {
  await proxy?.close();
  await bed?.close();
});

const NOW = { "retry-after": "0" };
const outcomes = () => proxy.requests.map((r) => (typeof r.outcome === "object" ? r.outcome.status : r.outcome));
const idempotencyKeys = () => proxy.requests.map((r) => r.headers["idempotency-key"]);

describe("GET requests", () => {
  it("succeed after 503s, within maxRetries", async () => {
    proxy.failNext({ status: 503, headers: NOW }, { status: 503, headers: NOW });
    const me = await bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 2 }).me.retrieve();
    expect(me.id).toBe(bed.org.id);
    expect(outcomes()).toEqual([503, 503, "forwarded"]);
  });

  it("give up after maxRetries and throw the last error", async () => {
    proxy.failNext({ status: 503, headers: NOW }, { status: 502, headers: NOW }, { status: 500, headers: NOW });
    const call = bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 2 }).me.retrieve();
    await expect(call).rejects.toBeInstanceOf(ApiError);
    await expect(call).rejects.toMatchObject({ status: 500 });
    expect(outcomes()).toEqual([503, 502, 500]);
  });

  it("are not retried with maxRetries 0", async () => {
    proxy.failNext({ status: 503, headers: NOW });
    await expect(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 0 }).me.retrieve()).rejects.toBeInstanceOf(ApiError);
    expect(proxy.requests).toHaveLength(1);
  });

  it("retry 429 after the Retry-After the server sent", async () => {
    proxy.failNext({ status: 429, headers: { "retry-after": "1" } });
    expect((await bed.platter({ baseUrl: proxy.baseUrl }).me.retrieve()).id).toBe(bed.org.id);
    expect(outcomes()).toEqual([429, "forwarded"]);
  });

  it("do not wait for a Retry-After over a minute: the RateLimitError is thrown", async () => {
    proxy.failNext({ status: 429, headers: { "retry-after": "3600" } });
    await expect(bed.platter({ baseUrl: proxy.baseUrl }).me.retrieve()).rejects.toBeInstanceOf(RateLimitError);
    expect(proxy.requests).toHaveLength(1);
  });

  it("retry 503 without Retry-After, with backoff", async () => {
    proxy.failNext({ status: 503 });
    expect((await bed.platter({ baseUrl: proxy.baseUrl }).me.retrieve()).id).toBe(bed.org.id);
    expect(outcomes()).toEqual([503, "forwarded"]);
  });

  it("retry a dropped connection and a timeout", async () => {
    proxy.failNext("disconnect", "stall");
    const me = await bed.platter({ baseUrl: proxy.baseUrl, timeoutMs: 500, maxRetries: 2 }).me.retrieve();
    expect(me.id).toBe(bed.org.id);
    expect(outcomes()).toEqual(["disconnect", "stall", "forwarded"]);
  });

  it("throw the ConnectionError once retries run out", async () => {
    proxy.failNext("disconnect", "disconnect");
    await expect(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 1 }).me.retrieve()).rejects.toBeInstanceOf(ConnectionError);
    expect(proxy.requests).toHaveLength(2);
  });

  it("retry a page in the middle of a walk, and the walk goes on", async () => {
    const list = bed.platter({ baseUrl: proxy.baseUrl }).clients.list({ limit: 1 });
    await bed.platter().clients.create({ name: "Walk A" });
    await bed.platter().clients.create({ name: "Walk B" });
    proxy.reset();
    const pages = list.pages();
    await pages.next();
    proxy.failNext({ status: 503, headers: NOW });
    const second = await pages.next();
    expect(second.done).toBe(false);
    expect(outcomes()).toEqual(["forwarded", 503, "forwarded"]);
    expect(proxy.requests[2]!.url).toBe(proxy.requests[1]!.url);
  });

  it.each([
    [400, "InvalidRequestError"],
    [401, "AuthenticationError"],
    [403, "PermissionError"],
    [404, "NotFoundError"],
  ])("are not retried on %i", async (status, name) => {
    proxy.failNext({ status, headers: NOW });
    await expect(bed.platter({ baseUrl: proxy.baseUrl }).me.retrieve()).rejects.toMatchObject({ name, status });
    expect(proxy.requests).toHaveLength(1);
  });

  it("are not retried on a real 404", async () => {
    await expect(bed.platter({ baseUrl: proxy.baseUrl }).events.retrieve(999_999)).rejects.toBeInstanceOf(NotFoundError);
    expect(proxy.requests).toHaveLength(1);
  });
});

describe("creates", () => {
  it("send a generated Idempotency-Key, a fresh one per create", async () => {
    const platter = bed.platter({ baseUrl: proxy.baseUrl });
    await platter.clients.create({ name: "Key one" });
    await platter.events.create({ name: "Key two" });
    const [first, second] = idempotencyKeys();
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).not.toBe(first);
  });

  it("send the caller's Idempotency-Key when given", async () => {
    await bed.platter({ baseUrl: proxy.baseUrl }).clients.create({ name: "Mine" }, { idempotencyKey: "order-4711" });
    expect(idempotencyKeys()).toEqual(["order-4711"]);
  });

  it("are retried after 503s with the same Idempotency-Key, and create once", async () => {
    proxy.failNext({ status: 503, headers: NOW }, { status: 503, headers: NOW });
    const { id } = await bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 2 }).events.create({ name: "Retried gala" });
    expect(outcomes()).toEqual([503, 503, "forwarded"]);
    const keys = idempotencyKeys();
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBeDefined();
    expect(proxy.requests.map((r) => r.body)).toEqual(Array(3).fill(JSON.stringify({ name: "Retried gala" })));
    const stored = await bed.sql<{ id: string }>("select id from events where organization_id = ? and name = 'Retried gala'", [bed.org.id]);
    expect(stored.map((row) => Number(row.id))).toEqual([id]);
  });

  it("are retried after a dropped connection with the same Idempotency-Key", async () => {
    proxy.failNext("disconnect");
    await bed.platter({ baseUrl: proxy.baseUrl }).clients.create({ name: "Dropped once" }, { idempotencyKey: "drop-1" });
    expect(outcomes()).toEqual(["disconnect", "forwarded"]);
    expect(idempotencyKeys()).toEqual(["drop-1", "drop-1"]);
  });

  it("are retried after a 409 (the first request with the key still running)", async () => {
    proxy.failNext({ status: 409, headers: NOW });
    await bed.platter({ baseUrl: proxy.baseUrl }).clients.create({ name: "Was busy" });
    expect(outcomes()).toEqual([409, "forwarded"]);
  });

  it("give up after maxRetries", async () => {
    proxy.failNext({ status: 503, headers: NOW }, { status: 503, headers: NOW });
    await expect(bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 1 }).clients.create({ name: "Never" })).rejects.toBeInstanceOf(ApiError);
    expect(proxy.requests).toHaveLength(2);
    // One key on both tries, and a key at all (a set of two missing keys has size 1 too).
    expect(new Set(idempotencyKeys()).size).toBe(1);
    expect(idempotencyKeys()[0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});
