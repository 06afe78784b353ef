import { type Actor, operatorActor } from "@platter/domain";
import { DeveloperSessions, type DeveloperSession } from "@platter/persistence";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AuditEntries, DeveloperAreaSessions } from "../src/index.ts";

/**
 * Ending Developer-area sessions: each ended session is audited `developer_session.ended` in the
 * change's transaction, by the session that ended it or by the operator; another organization's
 * session is `NotFound` and nothing is written. The audit log reads back what was recorded.
 */

let db: TestDatabase;
let org: OrganizationFixture;
let other: OrganizationFixture;
let operator: Actor;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  org = await createOrganization(db, "Session Owners");
  other = await createOrganization(db, "Other Owners");
  operator = operatorActor(org.scope, "root via the CLI");
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** A new live session of `of`, opened from `hint`. */
const open = (of: OrganizationFixture, hint: string): Promise<{ session: DeveloperSession; token: string }> =>
  db.run(Effect.gen(function* () {
    const sessions = yield* DeveloperSessions;
    const opened = yield* sessions.signIn((yield* sessions.createLink(of.scope, "cli")).token, hint);
    return { session: yield* sessions.authenticate(opened.token), token: opened.token };
  }));

const isLive = async (token: string) =>
  (await db.run(Effect.exit(DeveloperSessions.use((sessions) => sessions.authenticate(token)))))._tag === "Success";

const endedRows = (of: OrganizationFixture) =>
  rows<{ subject: string; session_id: string | null; operator: string | null }>(
    "select subject, session_id, operator from audit_log where organization_id = ? and action = 'developer_session.ended' order by id", [of.id],
  );

describe("ending sessions", () => {
  it("one session, from another: audited as the ending session; a second end records nothing", async () => {
    const mine = await open(org, "Chrome on Linux");
    const leaked = await open(org, "Firefox on Windows");
    const before = (await endedRows(org)).length;
    expect(await db.run(DeveloperAreaSessions.end(mine.session, leaked.session.sessionId))).toEqual({ changed: true });
    expect(await db.run(DeveloperAreaSessions.end(mine.session, leaked.session.sessionId))).toEqual({ changed: false });
    expect((await endedRows(org)).slice(before)).toEqual([
      { subject: `developer_session ${leaked.session.sessionId}`, session_id: String(mine.session.sessionId), operator: null },
    ]);
    expect(await isLive(leaked.token)).toBe(false);
    expect(await isLive(mine.token)).toBe(true);
    const listed = await db.run(DeveloperAreaSessions.list(mine.session));
    expect(listed.map((session) => session.id)).toContain(mine.session.sessionId);
    expect(listed.map((session) => session.id)).not.toContain(leaked.session.sessionId);
  });

  it("all the others: one row each, the acting session kept", async () => {
    const mine = await open(org, "Chrome on Linux");
    const others = [await open(org, "Safari on iOS"), await open(org, "Edge on Windows")];
    const before = (await endedRows(org)).length;
    const ended = await db.run(DeveloperAreaSessions.endOthers(mine.session));
    for (const { session, token } of others) {
      expect(ended).toContain(session.sessionId);
      expect(await isLive(token)).toBe(false);
    }
    expect(ended).not.toContain(mine.session.sessionId);
    expect(await isLive(mine.token)).toBe(true);
    expect((await endedRows(org)).slice(before).map((row) => row.subject).sort()).toEqual(ended.map((id) => `developer_session ${id}`).sort());
  });

  it("by the operator: every session ends, audited as the operator", async () => {
    await open(org, "Chrome on Linux");
    const before = (await endedRows(org)).length;
    const ended = await db.run(DeveloperAreaSessions.endOthers(operator));
    expect(ended.length).toBeGreaterThan(0);
    expect(await db.run(DeveloperAreaSessions.list(operator))).toEqual([]);
    expect((await endedRows(org)).slice(before).map((row) => row.operator)).toEqual(ended.map(() => "root via the CLI"));
  });

  it("never another organization's: NotFound, and nothing is written", async () => {
    const mine = await open(org, "Chrome on Linux");
    const theirs = await open(other, "Chrome on macOS");
    const audit = await rows("select count(*)::int as n from audit_log");
    expect(await db.run(Effect.flip(DeveloperAreaSessions.end(mine.session, theirs.session.sessionId)))).toMatchObject({ _tag: "NotFound" });
    expect(await isLive(theirs.token)).toBe(true);
    expect(await rows("select count(*)::int as n from audit_log")).toEqual(audit);
  });
});

describe("the audit log as read", () => {
  it("shows the ends, newest first, with the ending session's device", async () => {
    const page = await db.run(AuditEntries.page(operator, { action: "developer_session.ended", actor: "session" }, { limit: 2, after: undefined }));
    expect(page.data).toHaveLength(2);
    expect(page.data.map((entry) => entry.device_hint)).toEqual(["Chrome on Linux", "Chrome on Linux"]);
    expect(page.data[0]!.id).toBeGreaterThan(page.data[1]!.id);
    expect(page.next_cursor).not.toBeNull();
    expect(await db.run(AuditEntries.actions(operator))).toEqual(["developer_session.ended"]);
  });
});
