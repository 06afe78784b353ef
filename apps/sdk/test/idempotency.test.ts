import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { InvalidRequestError } from "../src/index.ts";
import { type FaultProxy, startFaultProxy } from "./fault-proxy.ts";
import { type SdkTestbed, startSdkTestbed } from "./sdk-testbed.ts";

/**
 * The SDK's retries together with the server's Idempotency-Key support: a create whose response
 * is lost is retried and answered by a replay, never by a second record.
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

const storedIds = async (table: "events" | "clients", name: string): Promise<number[]> =>
  (await bed.sql<{ id: string }>(`select id from ${table} where organization_id = ? and name = ?`, [bed.org.id, name])).map((r) =>
    Number(r.id),
  );

describe("a create whose response was lost", () => {
  it.each(["events", "clients"] as const)("is retried with the same key and answered by a replay (%s)", async (resource) => {
    const name = `Lost response ${resource}`;
    proxy.failNext("forward-then-503");
    const { id } = await bed.platter({ baseUrl: proxy.baseUrl })[resource].create({ name });
    const [lost, retry] = proxy.requests;
    expect(proxy.requests).toHaveLength(2);
    expect(lost!.upstream!.status).toBe(201);
    expect(retry!.headers["idempotency-key"]).toBe(lost!.headers["idempotency-key"]);
    expect(retry!.upstream!.status).toBe(201);
    expect(retry!.upstream!.headers.get("idempotent-replayed")).toBe("true");
    expect(await storedIds(resource, name)).toEqual([id]);
  });

  it("is lost on every try but one: still one record", async () => {
    proxy.failNext("forward-then-503", "forward-then-503");
    const { id } = await bed.platter({ baseUrl: proxy.baseUrl, maxRetries: 2 }).clients.create({ name: "Lost twice" });
    expect(proxy.requests.map((r) => r.upstream?.status)).toEqual([201, 201, 201]);
    expect(await storedIds("clients", "Lost twice")).toEqual([id]);
  });
});

describe("a key of the caller's", () => {
  it("answers the same id for the same body, across clients", async () => {
    const input = { name: "Order 77 dinner", guests: 40 };
    const first = await bed.platter().events.create(input, { idempotencyKey: "order-77" });
    const again = await bed.platter().events.create({ guests: 40, name: "Order 77 dinner" }, { idempotencyKey: "order-77" });
    expect(again).toEqual(first);
    expect(await storedIds("events", "Order 77 dinner")).toEqual([first.id]);
  });

  it("with a different body is an InvalidRequestError (422), not retried", async () => {
    await bed.platter().clients.create({ name: "Key owner" }, { idempotencyKey: "reused-key" });
    const call = bed.platter({ baseUrl: proxy.baseUrl }).clients.create({ name: "Someone else" }, { idempotencyKey: "reused-key" });
    await expect(call).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(call).rejects.toMatchObject({ status: 422, message: "This Idempotency-Key was already used with a different request" });
    expect(proxy.requests).toHaveLength(1);
  });

  it("sent by several creates at once creates one record; every call answers its id", async () => {
    const platter = bed.platter({ maxRetries: 5 });
    const results = await Promise.all(
      Array.from({ length: 8 }, () => platter.clients.create({ name: "Clicked eight times" }, { idempotencyKey: "double-click" })),
    );
    const ids = await storedIds("clients", "Clicked eight times");
    expect(ids).toHaveLength(1);
    expect(results).toEqual(Array(8).fill({ id: ids[0] }));
  });

  it("that is malformed is an InvalidRequestError (400)", async () => {
    await expect(bed.platter().clients.create({ name: "Bad key" }, { idempotencyKey: "x".repeat(256) })).rejects.toMatchObject({
      name: "InvalidRequestError",
      status: 400,
    });
  });
});
