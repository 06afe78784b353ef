import { apiKeyActor, operatorActor } from "@platter/domain";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ApiKeyRepository, AuditLog, DeveloperSessions, Housekeeping, LocalListeners } from "../src/index.ts";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { createClient } from "./created-records.ts";

/**
 * The retention sweep's share of the Developer area: audit-log rows older than
 * `AUDIT_LOG_RETENTION` go, in batches; expired sessions and sign-in links go a grace after they
 * expire, except those the audit log still names (kept until its rows go); ended API keys go a
 * grace after they ended, with a listener that has nothing left, except those the audit log or a
 * listener's deliveries still name. Time moves by moving rows.
 */

let db: TestDatabase;
let org: OrganizationFixture;
const DAY_MS = 24 * 3_600_000;

beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Retained Caterers");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);
const ids = async (table: string) => (await rows<{ id: string }>(`select id from ${table} where organization_id = ? order by id`, [org.id])).map((r) => Number(r.id));

/** A sign-in link, and when `signIn` the session it opened (with an audit row when `audited`). */
const access = (signIn: boolean, audited = false) =>
  db.run(Effect.gen(function* () {
    const sessions = yield* DeveloperSessions;
    const link = yield* sessions.createLink(org.scope, "cli");
    if (!signIn) return { link: link.id, session: undefined };
    const opened = yield* sessions.signIn(link.token);
    const session = yield* sessions.authenticate(opened.token);
    if (audited) yield* (yield* AuditLog).record(session, "api_key.created", "api_key 1");
    return { link: link.id, session: session.sessionId };
  }));

describe("the retention sweep for the Developer area", () => {
  it("removes the audit log's rows older than its retention, oldest first, a batch at a time", async () => {
    for (const subject of ["a", "b", "c", "d"]) await db.run(AuditLog.use((log) => log.record(operatorActor(org.scope, "root"), "x.done", subject)));
    const [first, second, third, fourth] = await ids("audit_log");
    await rows("update audit_log set at = now() - interval '401 days' where id in (?, ?, ?)", [first, second, third]);
    await rows("update audit_log set at = now() - interval '399 days' where id = ?", [fourth]);
    const prune = (batch: number) => db.run(Housekeeping.use((h) => h.pruneAuditLog(400 * DAY_MS, batch)));
    expect(await prune(2)).toBe(2);
    expect(await ids("audit_log")).toEqual([third, fourth]);
    expect(await prune(2)).toBe(1);
    expect(await prune(2)).toBe(0);
    expect(await ids("audit_log")).toEqual([fourth]);
  });

  it("removes expired sessions and links after the grace, keeping those the audit log names until its rows go", async () => {
    await rows("delete from audit_log where organization_id = ?", [org.id]);
    const acted = await access(true, true);
    const idle = await access(true);
    const unused = await access(false);
    const recent = await access(true);
    const live = await access(true);
    // Expired two days ago (the grace is a day), but for `recent` (an hour ago) and `live` (not expired).
    await rows("update developer_sessions set expires_at = now() - interval '2 days' where id in (?, ?)", [acted.session, idle.session]);
    await rows("update developer_sign_in_links set expires_at = now() - interval '2 days' where id in (?, ?, ?)", [acted.link, idle.link, unused.link]);
    await rows("update developer_sessions set expires_at = now() - interval '1 hour' where id = ?", [recent.session]);
    await rows("update developer_sign_in_links set expires_at = now() - interval '2 days' where id = ?", [recent.link]);

    const prune = () => db.run(Housekeeping.use((h) => h.pruneExpiredAccess(DAY_MS, 100)));
    expect(await prune()).toEqual({ sessions: 1, links: 2 });
    expect(await ids("developer_sessions")).toEqual([acted.session, recent.session, live.session]);
    // `recent`'s link expired long ago, but its session is kept, so it is too.
    expect(await ids("developer_sign_in_links")).toEqual([acted.link, recent.link, live.link]);
    expect(await prune()).toEqual({ sessions: 0, links: 0 });

    // Once the audit log's row goes, so do the session that acted and its link.
    await rows("update audit_log set at = now() - interval '401 days' where organization_id = ?", [org.id]);
    expect(await db.run(Housekeeping.use((h) => h.pruneAuditLog(400 * DAY_MS, 100)))).toBe(1);
    expect(await prune()).toEqual({ sessions: 1, links: 1 });
    expect(await ids("developer_sessions")).toEqual([recent.session, live.session]);
    expect(await ids("developer_sign_in_links")).toEqual([recent.link, live.link]);
  });

  it("removes API keys a grace after they ended, with an idle listener's row and secret; keeps those something still names", async () => {
    const create = () => db.run(ApiKeyRepository.use((keys) => keys.create(org.scope, "read_write"))).then((key) => key.id);
    const [revoked, expired, rolledOut, recent, audited, listening, withDeliveries, live] = [
      await create(), await create(), await create(), await create(), await create(), await create(), await create(), await create(),
    ];
    const request = { forwardTo: "http://localhost:4000/hook", eventTypes: [] };
    const idleListener = await db.run(LocalListeners.use((l) => l.open({ ...org.scope, apiKeyId: listening }, request, 60_000, 5)));
    await rows("update webhook_endpoints set listening_until = now() where id = ?", [idleListener.id]);
    const busyListener = await db.run(LocalListeners.use((l) => l.open({ ...org.scope, apiKeyId: withDeliveries }, request, 60_000, 5)));
    await db.run(createClient(org.scope, { name: "Heard by a listener" }));
    // The request log names the revoked key: it keeps only the number once the key goes.
    await rows(
      `insert into api_requests (organization_id, api_key_id, at, method, route, status, duration_ms, request_id)
       values (?, ?, now(), 'GET', '/v1/clients', 200, 1, 'req_kept')`,
      [org.id, revoked],
    );
    await db.run(AuditLog.use((log) => log.record(apiKeyActor({ ...org.scope, apiKeyId: audited }), "webhook_endpoint.listened", "key")));
    await rows("update api_keys set revoked_at = now() - interval '31 days' where id in (?, ?, ?, ?)", [revoked, audited, listening, withDeliveries]);
    await rows("update api_keys set expires_at = now() - interval '31 days' where id = ?", [expired]);
    await rows("update api_keys set expires_at = now() - interval '31 days', replaced_by = ? where id = ?", [live, rolledOut]);
    await rows("update api_keys set revoked_at = now() - interval '29 days' where id = ?", [recent]);

    const prune = (batch: number) => db.run(Housekeeping.use((h) => h.pruneEndedApiKeys(30 * DAY_MS, batch)));
    expect(await prune(2)).toBe(2);
    expect(await prune(100)).toBe(2);
    expect(await prune(100)).toBe(0);
    const keys = (await rows<{ id: string }>("select id from api_keys where organization_id = ? order by id", [org.id])).map((r) => Number(r.id));
    expect(keys).toEqual([org.readKeyId, org.writeKeyId, recent, audited, withDeliveries, live]);
    expect(await rows("select id from webhook_endpoints where id = ?", [idleListener.id])).toEqual([]);
    expect((await rows("select id from webhook_endpoints where id = ?", [busyListener.id])).length).toBe(1);
    expect(await rows("select api_key_id::int as key from api_requests where request_id = 'req_kept'")).toEqual([{ key: revoked }]);
  });
});

