import { request as httpRequest } from "node:http";
import { ApiKeyRepository } from "@platter/persistence";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNTHROTTLED } from "@platter/ops";
import { type ApiUnderTest, serveAnother, startApiUnderTest } from "./api-harness.ts";

/**
 * Failed authentications are limited per client address before any key is looked up: after
 * `authFailures` requests with a missing, malformed, unknown or revoked key, the address gets 429
 * with Retry-After (and the key is not looked up: the test holds a lock that would make any lookup
 * wait, and sees none waiting). The address is the connection's own unless a trusted proxy is
 * configured: only then does `X-Forwarded-For` count. Over real HTTP from several loopback
 * addresses (127.0.0.0/8 is all loopback on Linux).
 */

const FAILURES = { ...UNTHROTTLED, authFailures: 5, authFailureWindowSeconds: 60 };
const LOCKED = /^Too many failed authentications from this address; retry in \d+ s$/;
const unknownKey = () => `platter_ro_${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`;

let base: ApiUnderTest;

beforeAll(async () => {
  base = await startApiUnderTest();
});
afterAll(() => base?.close());

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: { error?: string };
}

/** A GET from the loopback address `from`, with `key` as the bearer key (`null`: no Authorization header). */
const getFrom = (baseUrl: string, from: string, key: string | null, headers: Record<string, string> = {}, path = "/v1/me"): Promise<Answer> =>
  new Promise((done, fail) => {
    const url = new URL(path, baseUrl);
    const request = httpRequest(
      {
        host: url.hostname, port: url.port, path: url.pathname, localAddress: from, agent: false,
        headers: { ...headers, ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          done({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
      },
    );
    request.on("error", fail);
    request.setTimeout(10_000, () => request.destroy(new Error(`no answer within 10 s from ${path}`)));
    request.end();
  });

/** Lookups waiting for `api_keys` now (while a test holds its lock, every lookup would). */
const waitingLookups = async (): Promise<number> => {
  const [row] = await base.sql<{ n: number }>("select count(*)::int as n from pg_locks where relation = 'api_keys'::regclass and not granted");
  return row!.n;
};

/** Runs `body` while `api_keys` is locked against every reader, as a trap for any key lookup. */
const withKeysLocked = async (body: () => Promise<void>): Promise<void> => {
  const em = base.db.orm.em.fork();
  await em.begin();
  try {
    await em.execute("lock table api_keys in access exclusive mode");
    await body();
  } finally {
    await em.rollback();
  }
};

const expectLocked = (answer: Answer, quota = 5) => {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ error: expect.stringMatching(LOCKED) });
  expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(Number(answer.headers["retry-after"])).toBeLessThanOrEqual(60);
  expect(answer.headers["ratelimit-policy"]).toBe(`"failed-auth";q=${quota};w=60`);
};

describe("failed authentications per client address", () => {
  it("lock an address out before any lookup once it used them up; other addresses and keys it used lately are unaffected", async () => {
    const api = await serveAnother(base.db, FAILURES);
    try {
      const org = await base.newOrganization();
      const revoked = await base.newOrganization();
      await base.db.run(ApiKeyRepository.use((keys) => keys.revoke(revoked.scope, revoked.readKeyId)));
      // A key that authenticated from the address before its failures.
      expect((await getFrom(api.baseUrl, "127.0.0.10", org.readKey)).status).toBe(200);

      const failures = [
        await getFrom(api.baseUrl, "127.0.0.10", null),
        await getFrom(api.baseUrl, "127.0.0.10", "not-a-key"),
        await getFrom(api.baseUrl, "127.0.0.10", unknownKey()),
        await getFrom(api.baseUrl, "127.0.0.10", revoked.readKey),
        await getFrom(api.baseUrl, "127.0.0.10", unknownKey()),
      ];
      expect(failures.map((a) => a.status)).toEqual([401, 401, 401, 401, 401]);

      let trapped: Promise<Answer> | undefined;
      await withKeysLocked(async () => {
        // The trap works: a lookup (from an address that is not locked out) waits for the lock.
        trapped = getFrom(api.baseUrl, "127.0.0.98", unknownKey());
        await expect.poll(waitingLookups).toBe(1);
        expectLocked(await getFrom(api.baseUrl, "127.0.0.10", unknownKey()));
        // A forged X-Forwarded-For changes nothing without TRUST_PROXY.
        expectLocked(await getFrom(api.baseUrl, "127.0.0.10", unknownKey(), { "x-forwarded-for": "203.0.113.7" }));
        // A valid key this instance has not seen authenticate is refused too: telling it from a guess takes a lookup.
        expectLocked(await getFrom(api.baseUrl, "127.0.0.10", org.writeKey));
        expect(await waitingLookups()).toBe(1);
      });
      expect((await trapped!).status).toBe(401);

      // The key that authenticated from the address lately still gets through; other addresses are untouched.
      expect((await getFrom(api.baseUrl, "127.0.0.10", org.readKey)).status).toBe(200);
      expect((await getFrom(api.baseUrl, "127.0.0.11", org.writeKey)).status).toBe(200);
      expect((await getFrom(api.baseUrl, "127.0.0.11", unknownKey())).status).toBe(401);
    } finally {
      await api.close();
    }
  });

  it("count an address's failures whatever X-Forwarded-For it sends, without TRUST_PROXY", async () => {
    const api = await serveAnother(base.db, FAILURES);
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await getFrom(api.baseUrl, "127.0.0.12", unknownKey(), { "x-forwarded-for": `198.51.100.${i}` })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await api.close();
    }
  });

  it.each([
    ["one proxy hop", { kind: "hops", hops: 1 }],
    ["the proxy's address", { kind: "addresses", addresses: ["loopback"] }],
  ] as const)("count the client behind a trusted proxy (%s) by X-Forwarded-For", async (_, trustProxy) => {
    const api = await serveAnother(base.db, FAILURES, { trustProxy });
    try {
      const org = await base.newOrganization();
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await getFrom(api.baseUrl, "127.0.0.13", unknownKey(), { "x-forwarded-for": "203.0.113.50" })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      await withKeysLocked(async () => {
        expectLocked(await getFrom(api.baseUrl, "127.0.0.13", unknownKey(), { "x-forwarded-for": "203.0.113.50" }));
        // The client cannot escape by prepending an address of its own: the proxy appends the one it saw.
        expectLocked(await getFrom(api.baseUrl, "127.0.0.13", unknownKey(), { "x-forwarded-for": "192.0.2.1, 203.0.113.50" }));
        expect(await waitingLookups()).toBe(0);
      });
      // Another client behind the same proxy is not locked out.
      expect((await getFrom(api.baseUrl, "127.0.0.13", unknownKey(), { "x-forwarded-for": "203.0.113.51" })).status).toBe(401);
      expect((await getFrom(api.baseUrl, "127.0.0.13", org.readKey, { "x-forwarded-for": "203.0.113.52" })).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it("do not trust X-Forwarded-For from a peer outside the trusted addresses", async () => {
    const api = await serveAnother(base.db, FAILURES, { trustProxy: { kind: "addresses", addresses: ["10.0.0.0/8"] } });
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await getFrom(api.baseUrl, "127.0.0.14", unknownKey(), { "x-forwarded-for": `198.51.100.${i}` })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    } finally {
      await api.close();
    }
  });
});
