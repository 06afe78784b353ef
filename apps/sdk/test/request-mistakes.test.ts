import { describe, expect, it } from "vitest";
import { ConflictError, ConnectionError, Platter } from "../src/index.ts";
import { retryDelayMs } from "../src/retry-policy.ts";

/** Mistakes in the caller's own input fail at once; a create's errors carry its key; 409s wait longer. */

const counting = (headers: Record<string, string> = {}) => {
  const calls: Request[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    calls.push(new Request(input, init));
    return new Response('{"error":"A request with this Idempotency-Key is still being processed; retry shortly"}', {
      status: 409,
      headers: { "content-type": "application/json", ...headers },
    });
  };
  return { calls, fetch: fetch as typeof globalThis.fetch };
};

describe("requests the caller got wrong", () => {
  it("refuses a key fetch cannot send with a TypeError, without sending or retrying", async () => {
    const { calls, fetch } = counting();
    const platter = new Platter({ apiKey: "platter_rw_x", baseUrl: "http://127.0.0.1:9/v1", fetch });
    await expect(platter.clients.create({ name: "x" }, { idempotencyKey: "bestellung-€" })).rejects.toBeInstanceOf(TypeError);
    expect(calls).toHaveLength(0);
  });

  it("refuses a body JSON cannot hold with a TypeError, not a ConnectionError", async () => {
    const { calls, fetch } = counting();
    const platter = new Platter({ apiKey: "platter_rw_x", baseUrl: "http://127.0.0.1:9/v1", fetch });
    const failure = await platter.clients.create({ name: 1n } as never).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(TypeError);
    expect(failure).not.toBeInstanceOf(ConnectionError);
    expect(calls).toHaveLength(0);
  });

  it("refuses a timeout longer than timers can wait", () => {
    expect(() => new Platter({ apiKey: "k", baseUrl: "http://x/v1", timeoutMs: 3_000_000_000 })).toThrow(TypeError);
  });
});

describe("a create that keeps failing", () => {
  it("carries the Idempotency-Key it was sent with, the same on every try", async () => {
    // Retry-After: 0 so that the retries after the 409s do not wait.
    const { calls, fetch } = counting({ "retry-after": "0" });
    const platter = new Platter({ apiKey: "platter_rw_x", baseUrl: "http://127.0.0.1:9/v1", fetch, maxRetries: 2 });
    const failure = await platter.clients.create({ name: "x" }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ConflictError);
    expect(calls).toHaveLength(3);
    const key = (failure as ConflictError).idempotencyKey;
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(calls.map((call) => call.headers.get("idempotency-key"))).toEqual([key, key, key]);
  });

  it("waits at least a second, growing, after a 409", () => {
    const conflict = new ConflictError("busy", { status: 409 });
    expect(retryDelayMs(0, conflict, () => 0)).toBe(1000);
    expect(retryDelayMs(1, conflict, () => 0)).toBe(2000);
  });
});
