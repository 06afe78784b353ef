import { request as httpRequest } from "node:http";
import { UNTHROTTLED } from "@platter/ops";
import { createOrganization, type OrganizationFixture } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { cookiePair, type RunningArea, signIn, startArea, type TestSession, useLink } from "./developer-area-harness.ts";

/**
 * The Developer area's own guards, over real HTTP from several loopback addresses (127.0.0.0/8 is
 * all this machine on Linux): failed session-cookie and sign-in-link lookups are limited per client
 * address before the database (the test holds a lock that would make any lookup wait, and sees
 * none waiting), and one organization's page loads in flight are bounded (pages made slow for
 * real by a lock the test holds on the table they read).
 */

const FAILURES = 4;
let area: RunningArea;
let org: OrganizationFixture;
let other: OrganizationFixture;
beforeAll(async () => {
  area = await startArea(inject("pgAdminUrl"), "'self'", {
    rateLimits: { ...UNTHROTTLED, authFailures: FAILURES, authFailureWindowSeconds: 60 },
    pageLoadsPerOrganization: 2,
  });
  org = await createOrganization(area.db, "Guarded Catering");
  other = await createOrganization(area.db, "Other Catering");
});
afterAll(() => area?.stop());

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A request to the area from the loopback address `from`. */
const send = (from: string, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Answer> =>
  new Promise((done, fail) => {
    const url = new URL(path, area.origin);
    const request = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, localAddress: from, agent: false, headers },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () => done({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    request.on("error", fail);
    request.setTimeout(30_000, () => request.destroy(new Error(`no answer within 30 s from ${path}`)));
    request.end();
  });

/** A well-formed token nobody was given (43 base64url characters, as sessions and links have). */
const unknownToken = () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
const sessionCookie = (token: string) => ({ cookie: `platter_developer_session=${token}` });

/** Lookups waiting for `table` now (while the test holds its lock, every lookup would). */
const waitingOn = async (table: string): Promise<number> => {
  const [row] = await area.db.orm.em.getConnection().execute<Array<{ n: number }>>(
    `select count(*)::int as n from pg_locks where relation = '${table}'::regclass and not granted`,
  );
  return row!.n;
};

/** Runs `body` while `table` is locked against every reader. */
const withLocked = async (table: string, body: () => Promise<void>): Promise<void> => {
  const em = area.db.orm.em.fork();
  await em.begin();
  try {
    await em.execute(`lock table ${table} in access exclusive mode`);
    await body();
  } finally {
    await em.rollback();
  }
};

const expectRefused = (answer: Answer) => {
  expect(answer.status).toBe(429);
  expect(answer.body).toContain("Too many failed sign-ins from your network");
  expect(Number(answer.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  expect(Number(answer.headers["retry-after"])).toBeLessThanOrEqual(60);
};

describe("failed session and sign-in link lookups per client address", () => {
  it("lock an address out before any lookup once it used them up; other addresses and sessions seen live are unaffected", async () => {
    const live = await signIn(area, await area.link(org.id));
    // The live session is seen from the address before its failures.
    expect((await send("127.0.0.10", "/api-keys", { cookie: live.cookie })).status).toBe(200);

    const failures = [
      await send("127.0.0.10", "/api-keys", sessionCookie(unknownToken())),
      await send("127.0.0.10", `/sign-in/${unknownToken()}`),
      await send("127.0.0.10", "/webhooks", sessionCookie(unknownToken())),
      await send("127.0.0.10", `/sign-in/${unknownToken()}`, { origin: area.origin }, "POST"),
    ];
    expect(failures.map((a) => a.status)).toEqual([401, 404, 401, 404]);
    // A cookie that finds no session is removed from the browser, so an honest one stops sending it.
    expect(failures[0]!.headers["set-cookie"]).toEqual(["platter_developer_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"]);

    let trapped: Promise<Answer> | undefined;
    await withLocked("developer_sessions", async () => {
      // The trap works: a lookup from an address that is not locked out waits for the lock.
      trapped = send("127.0.0.98", "/api-keys", sessionCookie(unknownToken()));
      await expect.poll(() => waitingOn("developer_sessions")).toBe(1);
      expectRefused(await send("127.0.0.10", "/api-keys", sessionCookie(unknownToken())));
      expectRefused(await send("127.0.0.10", "/", sessionCookie(unknownToken())));
      expect(await waitingOn("developer_sessions")).toBe(1);
    });
    expect((await trapped!).status).toBe(401);

    const link = await area.link(org.id);
    await withLocked("developer_sign_in_links", async () => {
      // A link is never let past the lock, not even a valid one: it is used once, so never seen before.
      expectRefused(await send("127.0.0.10", `/sign-in/${unknownToken()}`));
      expectRefused(await send("127.0.0.10", new URL(link).pathname));
      expectRefused(await send("127.0.0.10", new URL(link).pathname, { origin: area.origin }, "POST"));
      expect(await waitingOn("developer_sign_in_links")).toBe(0);
    });

    // Decided: a session this process saw live lately still gets through from the locked address
    // (one browser guessing does not lock out an office behind the same address); a valid one it
    // never saw is refused there, as telling it from a guess would take a lookup.
    expect((await send("127.0.0.10", "/api-keys", { cookie: live.cookie })).status).toBe(200);
    // (Continued from 127.0.0.1 without opening a page: the process has not seen the session live.)
    const unseen = { cookie: cookiePair((await useLink(area, link)).headers.get("set-cookie")!) };
    expectRefused(await send("127.0.0.10", "/api-keys", { cookie: unseen.cookie }));
    // Another address is unaffected: its failures are its own, and the unseen session works from it.
    expect((await send("127.0.0.11", "/api-keys", sessionCookie(unknownToken()))).status).toBe(401);
    expect((await send("127.0.0.11", `/sign-in/${unknownToken()}`)).status).toBe(404);
    expect((await send("127.0.0.11", "/api-keys", { cookie: unseen.cookie })).status).toBe(200);
  });
});

describe("page loads in flight per organization", () => {
  it("answers one past DEVELOPER_AREA_PAGE_LOADS_PER_ORGANIZATION with a 429 page and Retry-After while the others load; other organizations load", async () => {
    const [first, second] = [await signIn(area, await area.link(org.id)), await signIn(area, await area.link(org.id))];
    const elsewhere: TestSession = await signIn(area, await area.link(other.id));
    let slow: Promise<Answer[]> | undefined;
    await withLocked("api_keys", async () => {
      // Two heavy pages of the organization, each waiting in the database on the lock the test holds.
      slow = Promise.all([send("127.0.0.20", "/api-keys", { cookie: first.cookie }), send("127.0.0.20", "/api-keys", { cookie: second.cookie })]);
      await expect.poll(() => waitingOn("api_keys")).toBe(2);
      // A third of the same organization (any session, any page, a form too) is not started.
      for (const [path, session] of [["/api-keys", first], ["/webhooks", second], ["/deliveries", first]] as const) {
        const refused = await send("127.0.0.20", path, { cookie: session.cookie });
        expect(refused.status).toBe(429);
        expect(refused.headers["retry-after"]).toBe("1");
        expect(refused.body).toContain("Too many pages loading at once");
      }
      expect(await waitingOn("api_keys")).toBe(2);
      // Another organization's pages load meanwhile (the pool is not held by the first).
      expect((await send("127.0.0.21", "/sessions", { cookie: elsewhere.cookie })).status).toBe(200);
    });
    expect((await slow!).map((answer) => answer.status)).toEqual([200, 200]);
    // Once they finished, the organization loads pages again.
    expect((await send("127.0.0.20", "/webhooks", { cookie: first.cookie })).status).toBe(200);
  });
});
