import { hashAccessToken } from "@platter/domain";
import { Effect } from "effect";
import { TestClock } from "effect/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository, AuditLog, DeveloperSessions } from "../src/index.ts";
import { Operator } from "../src/operator.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "../src/testing/index.ts";

/**
 * Developer-area access: a sign-in link opens one session, once, within 15 minutes by the Clock;
 * a session lasts 8 hours or until signed out; only hashes of tokens are stored; and a session's
 * scope reaches its own organization's data only.
 */

let db: TestDatabase;
let a: OrganizationFixture;
let b: OrganizationFixture;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  a = await createOrganization(db, "Session Caterers A");
  b = await createOrganization(db, "Session Caterers B");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** Runs `program` with the test clock set to the wall clock's now. */
const atNow = <A, E>(program: Effect.Effect<A, E, any>) =>
  db.run(Effect.andThen(TestClock.setTime(Date.now()), program).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<A, E, never>);

/** A new link of `org`, asked for by the CLI. */
const linkOf = (org: OrganizationFixture) =>
  DeveloperSessions.use((sessions) => sessions.createLink(org.scope, "cli"));

describe("sign-in links", () => {
  it("open one session, once; a second opening is refused as used", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const link = yield* linkOf(a);
        const opened = yield* sessions.signIn(link.token);
        const again = yield* Effect.flip(sessions.signIn(link.token));
        const session = yield* sessions.authenticate(opened.token);
        return { link, opened, again, session };
      }),
    );
    expect(result.again).toMatchObject({ _tag: "SignInRefused", reason: "used" });
    expect(result.session.scope.organizationId).toBe(a.id);
    expect(result.session.linkId).toBe(result.link.id);
    expect(result.opened.token).not.toBe(result.link.token);
    expect(await rows("select count(*)::int as n from developer_sessions where link_id = ?", [result.link.id])).toEqual([{ n: 1 }]);
  });

  it("can be looked up (the organization's name) without being used, and then say why they no longer work", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const link = yield* linkOf(a);
        const first = yield* sessions.checkLink(link.token);
        const second = yield* sessions.checkLink(link.token);
        yield* sessions.signIn(link.token);
        const used = yield* Effect.flip(sessions.checkLink(link.token));
        const late = yield* linkOf(a);
        yield* TestClock.adjust("15 minutes");
        const expired = yield* Effect.flip(sessions.checkLink(late.token));
        const unknown = yield* Effect.flip(sessions.checkLink("x".repeat(43)));
        return { first, second, used, expired, unknown };
      }),
    );
    expect(result.first).toEqual({ organizationName: "Session Caterers A" });
    expect(result.second).toEqual(result.first);
    expect(result.used).toMatchObject({ _tag: "SignInRefused", reason: "used" });
    expect(result.expired).toMatchObject({ _tag: "SignInRefused", reason: "expired" });
    expect(result.unknown).toMatchObject({ _tag: "SignInRefused", reason: "unknown" });
  });

  it("expire 15 minutes after they were made, by the Clock", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const early = yield* linkOf(a);
        const late = yield* linkOf(a);
        yield* TestClock.adjust("14 minutes");
        const inTime = yield* sessions.signIn(early.token);
        yield* TestClock.adjust("1 minute");
        const tooLate = yield* Effect.flip(sessions.signIn(late.token));
        return { inTime, tooLate };
      }),
    );
    expect(result.inTime.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(result.tooLate).toMatchObject({ _tag: "SignInRefused", reason: "expired" });
  });

  it.each([
    ["a token never issued", "x".repeat(43)],
    ["a malformed token", "not a token"],
    ["an empty token", ""],
    ["markup", "<script>alert(1)</script>"],
  ])("refuses %s as unknown", async (_case, token) => {
    const refused = await atNow(Effect.flip(DeveloperSessions.use((sessions) => sessions.signIn(token))));
    expect(refused).toMatchObject({ _tag: "SignInRefused", reason: "unknown" });
  });

  it("store only hashes of their tokens and of the sessions' tokens, and who asked", async () => {
    const { link, opened } = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const link = yield* sessions.createLink(b.scope, "application");
        return { link, opened: yield* sessions.signIn(link.token) };
      }),
    );
    const [stored] = await rows<{ token_hash: string; requested_by: string; lifetime: number }>(
      "select token_hash, requested_by, extract(epoch from expires_at - created_at)::int as lifetime from developer_sign_in_links where id = ?",
      [link.id],
    );
    expect(stored).toEqual({ token_hash: hashAccessToken(link.token), requested_by: "application", lifetime: 900 });
    const dump = JSON.stringify(await rows("select to_jsonb(l) as l from developer_sign_in_links l union all select to_jsonb(s) from developer_sessions s"));
    expect(dump).not.toContain(link.token);
    expect(dump).not.toContain(opened.token);
    expect(dump).toContain(hashAccessToken(opened.token));
  });
});

describe("sessions", () => {
  it("last 8 hours by the Clock", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const opened = yield* sessions.signIn((yield* linkOf(a)).token);
        yield* TestClock.adjust("7 hours");
        yield* TestClock.adjust("59 minutes");
        const stillOpen = yield* sessions.authenticate(opened.token);
        yield* TestClock.adjust("1 minute");
        const ended = yield* Effect.flip(sessions.authenticate(opened.token));
        return { stillOpen, ended };
      }),
    );
    expect(result.stillOpen.scope.organizationId).toBe(a.id);
    expect(result.ended).toMatchObject({ _tag: "Unauthenticated" });
  });

  it("end at sign-out, and signing out again is harmless", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const opened = yield* sessions.signIn((yield* linkOf(a)).token);
        const session = yield* sessions.authenticate(opened.token);
        yield* sessions.signOut(session);
        yield* sessions.signOut(session);
        return yield* Effect.flip(sessions.authenticate(opened.token));
      }),
    );
    expect(result).toMatchObject({ _tag: "Unauthenticated" });
  });

  it.each([["an unknown token", "y".repeat(43)], ["a malformed token", "a;b"], ["a link's token", undefined]])(
    "refuse %s",
    async (_case, token) => {
      const refused = await atNow(
        Effect.gen(function* () {
          const link = yield* linkOf(a);
          return yield* Effect.flip(DeveloperSessions.use((sessions) => sessions.authenticate(token ?? link.token)));
        }),
      );
      expect(refused).toMatchObject({ _tag: "Unauthenticated" });
    },
  );

  it("see their own organization's keys and never another's", async () => {
    const keys = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(a)).token)).token);
        const created = yield* ApiKeyRepository.use((r) => r.create(session.scope, "read", "CI deploys"));
        const listed = yield* ApiKeyRepository.use((r) => r.list(session.scope));
        const revokeB = yield* Effect.flip(ApiKeyRepository.use((r) => r.revoke(session.scope, b.readKeyId)));
        return { created, listed, revokeB };
      }),
    );
    expect(keys.listed.map((k) => k.id).sort((x, y) => x - y)).toEqual(
      expect.arrayContaining([a.readKeyId, a.writeKeyId, keys.created.id]),
    );
    expect(keys.listed.map((k) => k.id)).not.toContain(b.readKeyId);
    expect(keys.listed.map((k) => k.id)).not.toContain(b.writeKeyId);
    expect(keys.listed.find((k) => k.id === keys.created.id)).toMatchObject({ name: "CI deploys", access: "read", revoked_at: null });
    expect(keys.revokeB).toMatchObject({ _tag: "NotFound" });
    expect(await rows("select revoked_at from api_keys where id = ?", [b.readKeyId])).toEqual([{ revoked_at: null }]);
  });
});

describe("the audit log", () => {
  it("records an action with the session and the link that let it in, at the Clock's time", async () => {
    const { session, entries, at } = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(b)).token)).token);
        yield* TestClock.adjust("1 hour");
        const audit = yield* AuditLog;
        yield* audit.record(session, "api_key.created", "api_key 7");
        return { session, entries: yield* audit.list(b.scope, 10), at: new Date(Date.now() + 3600_000) };
      }),
    );
    expect(entries[0]).toMatchObject({ session_id: session.sessionId, link_id: session.linkId, action: "api_key.created", subject: "api_key 7" });
    expect(Math.abs(Date.parse(entries[0]!.at) - at.getTime())).toBeLessThan(60_000);
    expect(await atNow(AuditLog.use((audit) => audit.list(a.scope, 10)))).toEqual([]);
  });

  it("cannot name another organization's session", async () => {
    const refused = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(b)).token)).token);
        const operatorScopeOfA = yield* Operator.use((o) => o.scopeOf(a.id));
        return yield* Effect.flip(AuditLog.use((audit) => audit.record({ ...session, scope: operatorScopeOfA }, "api_key.revoked", "api_key 1")));
      }),
    );
    expect(refused).toMatchObject({ _tag: "NotFound" });
  });
});

describe("an organization's sessions", () => {
  it("keep the device hint given at sign-in and start as seen then; only the live ones are listed, most recently seen first", async () => {
    const org = await createOrganization(db, "Listing Caterers");
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const signIn = (hint?: string) => Effect.flatMap(linkOf(org), (link) => sessions.signIn(link.token, hint));
        const laptop = yield* sessions.authenticate((yield* signIn("Firefox on Linux")).token);
        yield* TestClock.adjust("2 minutes");
        const phone = yield* sessions.authenticate((yield* signIn("Safari on iOS")).token);
        yield* TestClock.adjust("1 minute");
        const old = yield* sessions.authenticate((yield* signIn()).token);
        yield* sessions.signOut(old);
        yield* TestClock.adjust("1 minute");
        return { laptop, phone, listed: yield* sessions.list(org.scope), started: Date.now() };
      }),
    );
    expect(result.listed.map(({ id, device_hint }) => ({ id, device_hint }))).toEqual([
      { id: result.phone.sessionId, device_hint: "Safari on iOS" },
      { id: result.laptop.sessionId, device_hint: "Firefox on Linux" },
    ]);
    for (const session of result.listed) expect(session.last_seen_at).toBe(session.started_at);
    expect(Date.parse(result.listed[0]!.started_at) - Date.parse(result.listed[1]!.started_at)).toBe(120_000);
    expect(Date.parse(result.listed[0]!.expires_at) - Date.parse(result.listed[0]!.started_at)).toBe(8 * 3600_000);
  });

  it("note when they were last seen at most once a minute, off the request's path", async () => {
    const org = await createOrganization(db, "Seen Caterers");
    const lastSeen = async (id: number) =>
      (await rows<{ ms: string }>("select (extract(epoch from last_seen_at) * 1000)::bigint as ms from developer_sessions where id = ?", [id]))[0]!.ms;
    /** Waits for the fire-and-forget write of `expected`, collecting every value read on the way. */
    const seenUntil = async (id: number, expected: number, seen: Set<number>) => {
      for (let tries = 0; tries < 200; tries += 1) {
        const value = Number(await lastSeen(id));
        seen.add(value);
        if (value === expected) return;
        await new Promise((done) => setTimeout(done, 25));
      }
      throw new Error(`last_seen_at never became ${new Date(expected).toISOString()}`);
    };
    const seen = new Set<number>();
    // The same session authenticated 30 s after sign-in (no write: seen within the minute), then at 61 s (written), 90 s, 122 s.
    const opened = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        return yield* sessions.signIn((yield* linkOf(org)).token, "Chrome on Linux");
      }),
    );
    const second = await atNow(DeveloperSessions.use((sessions) => sessions.authenticate(opened.token)));
    const begun = Number(await lastSeen(second.sessionId));
    const authenticateAt = (offsetMs: number) =>
      db.run(Effect.andThen(TestClock.setTime(begun + offsetMs), DeveloperSessions.use((sessions) => sessions.authenticate(opened.token)))
        .pipe(Effect.provide(TestClock.layer())) as Effect.Effect<unknown, unknown, never>);
    await authenticateAt(30_000);
    await authenticateAt(61_000);
    await seenUntil(second.sessionId, begun + 61_000, seen);
    await authenticateAt(90_000);
    await authenticateAt(122_000);
    await seenUntil(second.sessionId, begun + 122_000, seen);
    // Never the 30 s or 90 s marks: each minute is written once.
    expect([...seen].filter((value) => value !== begun && value !== begun + 61_000 && value !== begun + 122_000)).toEqual([]);
  });

  it("end one at a time or all but one; the ended are signed out, and ending again changes nothing", async () => {
    const org = await createOrganization(db, "Ending Caterers");
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const open = () => Effect.flatMap(linkOf(org), (link) => sessions.signIn(link.token, "Chrome on Linux"));
        const [first, second, third, fourth] = [yield* open(), yield* open(), yield* open(), yield* open()];
        const kept = yield* sessions.authenticate(first!.token);
        const one = yield* sessions.authenticate(second!.token);
        const endedOne = yield* sessions.end(org.scope, one.sessionId);
        const again = yield* sessions.end(org.scope, one.sessionId);
        const endedRest = yield* sessions.endAll(org.scope, kept.sessionId);
        const refused = yield* Effect.all([second, third, fourth].map((opened) => Effect.flip(sessions.authenticate(opened!.token))));
        const stillIn = yield* sessions.authenticate(first!.token);
        const listed = yield* sessions.list(org.scope);
        const unknown = yield* Effect.flip(sessions.end(org.scope, 987_654_321));
        const endedAll = yield* sessions.endAll(org.scope);
        return { kept, endedOne, again, endedRest, refused, stillIn, listed, unknown, endedAll, left: yield* sessions.list(org.scope) };
      }),
    );
    expect(result.endedOne).toEqual({ changed: true });
    expect(result.again).toEqual({ changed: false });
    expect(result.endedRest).toHaveLength(2);
    expect(result.refused.map((error) => error._tag)).toEqual(["Unauthenticated", "Unauthenticated", "Unauthenticated"]);
    expect(result.stillIn.sessionId).toBe(result.kept.sessionId);
    expect(result.listed.map((session) => session.id)).toEqual([result.kept.sessionId]);
    expect(result.unknown).toMatchObject({ _tag: "NotFound" });
    expect(result.endedAll).toEqual([result.kept.sessionId]);
    expect(result.left).toEqual([]);
  });
});

describe("the audit log's pages", () => {
  it("page newest first with each session's device, filtered by action, actor and time", async () => {
    const org = await createOrganization(db, "Audited Caterers");
    const base = Date.parse("2026-11-20T09:00:00.000Z");
    const { session, pages, filtered, actions } = await db.run(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const audit = yield* AuditLog;
        const operator = { _tag: "Operator" as const, scope: org.scope, name: "root via the CLI" };
        yield* TestClock.setTime(base);
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(org)).token, "Edge on Windows")).token);
        for (let day = 0; day < 5; day += 1) {
          yield* TestClock.setTime(base + day * 86_400_000);
          yield* audit.record(session, "api_key.created", `api_key ${day}`);
          yield* audit.record(operator, "webhook_endpoint.added", `webhook_endpoint ${day}`);
        }
        const pages = [yield* audit.page(org.scope, {}, { limit: 4, after: undefined })];
        while (pages.at(-1)!.next_cursor !== null) {
          const last = pages.at(-1)!.data.at(-1)!;
          pages.push(yield* audit.page(org.scope, {}, { limit: 4, after: [last.at, last.id] }));
        }
        const filtered = {
          action: yield* audit.page(org.scope, { action: "api_key.created" }, { limit: 50, after: undefined }),
          operator: yield* audit.page(org.scope, { actor: "operator" }, { limit: 50, after: undefined }),
          session: yield* audit.page(org.scope, { actor: "session", from: "2026-11-21T00:00:00.000Z", to: "2026-11-23T00:00:00.000Z" }, { limit: 50, after: undefined }),
        };
        return { session, pages, filtered, actions: yield* audit.actions(org.scope) };
      }).pipe(Effect.provide(TestClock.layer())),
    );
    const all = pages.flatMap((page) => page.data);
    expect(pages.map((page) => page.data.length)).toEqual([4, 4, 2]);
    expect(all.map((entry) => entry.subject)).toEqual([4, 3, 2, 1, 0].flatMap((day) => [`webhook_endpoint ${day}`, `api_key ${day}`]));
    expect(all[1]).toEqual({
      id: expect.any(Number), session_id: session.sessionId, link_id: session.linkId, operator: null, api_key: null, device_hint: "Edge on Windows",
      action: "api_key.created", subject: "api_key 4", at: "2026-11-24T09:00:00.000Z",
    });
    expect(all[0]).toMatchObject({ session_id: null, operator: "root via the CLI", device_hint: null });
    expect(filtered.action.data.map((entry) => entry.subject)).toEqual([4, 3, 2, 1, 0].map((day) => `api_key ${day}`));
    expect(filtered.operator.data.every((entry) => entry.operator === "root via the CLI")).toBe(true);
    expect(filtered.operator.data).toHaveLength(5);
    expect(filtered.session.data.map((entry) => entry.subject)).toEqual(["api_key 2", "api_key 1"]);
    expect(actions).toEqual(["api_key.created", "webhook_endpoint.added"]);
  });
});
