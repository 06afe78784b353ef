import { generateSecretKey, hashAccessToken, makeSecretCipher, sessionSecretContext } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository, AuditLog, DeveloperSessions } from "../src/index.ts";
import { Operator } from "../src/operator.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";

/**
 * Developer-area access: a sign-in link opens one session, once, within 15 minutes by the
 * database's clock; a session lasts 8 hours or until signed out; only hashes of tokens are stored;
 * and a session's scope reaches its own organization's data only. Time moves by moving rows.
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

/** Runs `program`. */
const atNow = <A, E>(program: Effect.Effect<A, E, any>) => db.run(program as Effect.Effect<A, E, never>);

/** `minutes` pass for a sign-in link (by id): its times move back. */
const linkAges = (id: number, minutes: number) =>
  Effect.promise(() => rows(
    "update developer_sign_in_links set created_at = created_at - ? * interval '1 minute', expires_at = expires_at - ? * interval '1 minute' where id = ?",
    [minutes, minutes, id],
  ));

/** `minutes` pass for a session (by id): its times move back. */
const sessionAges = (id: number, minutes: number) =>
  Effect.promise(() => rows(
    `update developer_sessions set created_at = created_at - ? * interval '1 minute', expires_at = expires_at - ? * interval '1 minute',
       last_seen_at = last_seen_at - ? * interval '1 minute' where id = ?`,
    [minutes, minutes, minutes, id],
  ));

/** The session a token opened (its id). */
const sessionIdOf = (token: string) =>
  Effect.promise(() => rows<{ id: string }>("select id from developer_sessions where token_hash = ?", [hashAccessToken(token)]))
    .pipe(Effect.map((found) => Number(found[0]!.id)));

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
        yield* linkAges(late.id, 15);
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

  it("expire 15 minutes after they were made, by the database's clock", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const early = yield* linkOf(a);
        const late = yield* linkOf(a);
        yield* linkAges(early.id, 14);
        yield* linkAges(late.id, 14);
        const inTime = yield* sessions.signIn(early.token);
        yield* linkAges(late.id, 1);
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
  it("last 8 hours by the database's clock", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const opened = yield* sessions.signIn((yield* linkOf(a)).token);
        const id = yield* sessionIdOf(opened.token);
        yield* sessionAges(id, 7 * 60 + 59);
        const stillOpen = yield* sessions.authenticate(opened.token);
        yield* sessionAges(id, 1);
        const ended = yield* Effect.flip(sessions.authenticate(opened.token));
        return { stillOpen, ended };
      }),
    );
    expect(result.stillOpen.scope.organizationId).toBe(a.id);
    expect(result.ended).toMatchObject({ _tag: "Unauthenticated" });
  });

  it("is signed out, not a 500, when its form secret was sealed with a key this process does not hold; others go on", async () => {
    const result = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const sealedElsewhere = yield* sessions.signIn((yield* linkOf(a)).token);
        const other = yield* sessions.signIn((yield* linkOf(a)).token);
        const hash = hashAccessToken(sealedElsewhere.token);
        const foreign = makeSecretCipher([generateSecretKey("elsewhere").key]).seal("a form secret", sessionSecretContext(a.id, hash));
        yield* Effect.promise(() => rows("update developer_sessions set form_secret = ? where token_hash = ?", [foreign, hash]));
        return { refused: yield* Effect.flip(sessions.authenticate(sealedElsewhere.token)), other: yield* sessions.authenticate(other.token) };
      }),
    );
    expect(result.refused).toMatchObject({ _tag: "Unauthenticated" });
    expect(result.other.scope.organizationId).toBe(a.id);
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
  it("records an action with the session and the link that let it in, at the database's time", async () => {
    const { session, entries, at } = await atNow(
      Effect.gen(function* () {
        const sessions = yield* DeveloperSessions;
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(b)).token)).token);
        const audit = yield* AuditLog;
        yield* audit.record(session, "api_key.created", "api_key 7");
        const [now] = yield* Effect.promise(() => rows<{ ms: number }>("select (extract(epoch from now()) * 1000)::float8 as ms"));
        return { session, entries: yield* audit.list(b.scope, 10), at: now!.ms };
      }),
    );
    expect(entries[0]).toMatchObject({ session_id: session.sessionId, link_id: session.linkId, action: "api_key.created", subject: "api_key 7" });
    expect(Math.abs(Date.parse(entries[0]!.at) - at)).toBeLessThan(60_000);
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
        const phone = yield* sessions.authenticate((yield* signIn("Safari on iOS")).token);
        const old = yield* sessions.authenticate((yield* signIn()).token);
        yield* sessions.signOut(old);
        // The laptop signed in 4 minutes ago, the phone 2.
        yield* sessionAges(laptop.sessionId, 4);
        yield* sessionAges(phone.sessionId, 2);
        return { laptop, phone, listed: yield* sessions.list(org.scope) };
      }),
    );
    expect(result.listed.map(({ id, device_hint }) => ({ id, device_hint }))).toEqual([
      { id: result.phone.sessionId, device_hint: "Safari on iOS" },
      { id: result.laptop.sessionId, device_hint: "Firefox on Linux" },
    ]);
    for (const session of result.listed) expect(session.last_seen_at).toBe(session.started_at);
    const apart = Date.parse(result.listed[0]!.started_at) - Date.parse(result.listed[1]!.started_at);
    expect(apart).toBeGreaterThanOrEqual(120_000);
    expect(apart).toBeLessThan(180_000);
    expect(Date.parse(result.listed[0]!.expires_at) - Date.parse(result.listed[0]!.started_at)).toBe(8 * 3600_000);
  });

  it("note when they were last seen at most once a minute, off the request's path", async () => {
    const org = await createOrganization(db, "Seen Caterers");
    const opened = await atNow(Effect.flatMap(linkOf(org), (link) => DeveloperSessions.use((sessions) => sessions.signIn(link.token, "Chrome on Linux"))));
    const id = await atNow(sessionIdOf(opened.token));
    /** Sets when the session was last seen, `secondsAgo` by the database's clock, and returns that time (ms). */
    const seenAgo = async (secondsAgo: number) =>
      Number((await rows<{ ms: string }>(
        "update developer_sessions set last_seen_at = now() - ? * interval '1 second' where id = ? returning (extract(epoch from last_seen_at) * 1000)::bigint as ms",
        [secondsAgo, id],
      ))[0]!.ms);
    const lastSeen = async () =>
      Number((await rows<{ ms: string }>("select (extract(epoch from last_seen_at) * 1000)::bigint as ms from developer_sessions where id = ?", [id]))[0]!.ms);
    const authenticate = () => atNow(DeveloperSessions.use((sessions) => sessions.authenticate(opened.token)));
    /** Authenticates a second session after the first: its own note is written, so the first's would be too by then. */
    const other = await atNow(Effect.flatMap(linkOf(org), (link) => DeveloperSessions.use((sessions) => sessions.signIn(link.token))));
    const otherId = await atNow(sessionIdOf(other.token));
    const settled = async () => {
      const before = Number((await rows<{ ms: string }>(
        "update developer_sessions set last_seen_at = now() - interval '2 minutes' where id = ? returning (extract(epoch from last_seen_at) * 1000)::bigint as ms",
        [otherId],
      ))[0]!.ms);
      await atNow(DeveloperSessions.use((sessions) => sessions.authenticate(other.token)));
      for (let tries = 0; tries < 400; tries += 1) {
        const [row] = await rows<{ ms: string }>("select (extract(epoch from last_seen_at) * 1000)::bigint as ms from developer_sessions where id = ?", [otherId]);
        if (Number(row!.ms) > before) return;
        await new Promise((done) => setTimeout(done, 25));
      }
      throw new Error("the other session's note was never written");
    };
    // Seen 30 s ago: authenticating writes nothing (the notes go in order: once the later one is written, this one would be).
    const thirtyAgo = await seenAgo(30);
    await authenticate();
    await settled();
    expect(await lastSeen()).toBe(thirtyAgo);
    // Seen 61 s ago: authenticating notes it as seen now.
    const sixtyOneAgo = await seenAgo(61);
    await authenticate();
    await settled();
    expect(await lastSeen()).toBeGreaterThan(sixtyOneAgo + 60_000);
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
        const session = yield* sessions.authenticate((yield* sessions.signIn((yield* linkOf(org)).token, "Edge on Windows")).token);
        for (let day = 0; day < 5; day += 1) {
          yield* audit.record(session, "api_key.created", `api_key ${day}`);
          yield* audit.record(operator, "webhook_endpoint.added", `webhook_endpoint ${day}`);
        }
        // Each day's two entries at 09:00 of that day (the log's time is the database's: moved here by moving rows).
        yield* Effect.promise(() => rows(
          "update audit_log set at = ?::timestamptz + (split_part(subject, ' ', 2)::int) * interval '1 day' where organization_id = ?",
          [new Date(base).toISOString(), org.id],
        ));
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
      }),
    );
    const all = pages.flatMap((page) => page.data);
    expect(pages.map((page) => page.data.length)).toEqual([4, 4, 2]);
    expect(all.map((entry) => entry.subject)).toEqual([4, 3, 2, 1, 0].flatMap((day) => [`webhook_endpoint ${day}`, `api_key ${day}`]));
    expect(all[1]).toEqual({
      id: expect.any(Number), session_id: session.sessionId, link_id: session.linkId, operator: null, api_key: null, device_hint: "Edge on Windows",
      action: "api_key.created", subject: "api_key 4", details: null, at: "2026-11-24T09:00:00.000Z",
    });
    expect(all[0]).toMatchObject({ session_id: null, operator: "root via the CLI", device_hint: null });
    expect(filtered.action.data.map((entry) => entry.subject)).toEqual([4, 3, 2, 1, 0].map((day) => `api_key ${day}`));
    expect(filtered.operator.data.every((entry) => entry.operator === "root via the CLI")).toBe(true);
    expect(filtered.operator.data).toHaveLength(5);
    expect(filtered.session.data.map((entry) => entry.subject)).toEqual(["api_key 2", "api_key 1"]);
    expect(actions).toEqual(["api_key.created", "webhook_endpoint.added"]);
  });
});
