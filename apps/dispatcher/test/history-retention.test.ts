import { apiKeyActor, generateSigningSecret, operatorActor } from "@platter/domain";
import { AuditLog, DeveloperSessions, HistoryPartitions, WEBHOOK_HISTORY, WebhookEndpointRepository } from "@platter/persistence";
import { backdateHistory, createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";

/** Bounded history, in a real dispatcher process: its sweep drops the partitions past the retention. */

let db: TestDatabase;
let target: Receiver;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  target = await startReceiver();
});
afterAll(async () => {
  await killLeftoverDispatchers();
  await target?.close();
  await db?.dispose();
});

const rowCounts = async (organizationId: number) => {
  const [row] = await sql<{ messages: number; deliveries: number; attempts: number }>(
    db,
    `select (select count(*)::int from webhook_messages where organization_id = ?) as messages,
       (select count(*)::int from webhook_deliveries where organization_id = ?) as deliveries,
       (select count(*)::int from webhook_attempts where organization_id = ?) as attempts`,
    [organizationId, organizationId, organizationId],
  );
  return row!;
};

describe("delivery history retention", () => {
  it("drops the history past WEBHOOK_RETENTION by partition in its sweep, a dead endpoint's pending deliveries with it, and keeps the rest", async () => {
    const old = await createOrganization(db, "Dead Endpoint Caterers");
    const recent = await createOrganization(db, "Retaining Caterers");
    // An endpoint nothing answers: its deliveries stay pending.
    await db.run(WebhookEndpointRepository.use((r) => r.add(old.scope, "https://198.51.100.61/dead", [], generateSigningSecret())));
    await db.run(WebhookEndpointRepository.use((r) => r.add(recent.scope, target.url, [], generateSigningSecret())));
    for (let i = 0; i < 5; i++) await db.run(Clients.create(apiKeyActor(old.scope), { name: `Old ${i}` }));
    for (let i = 0; i < 5; i++) await db.run(Clients.create(apiKeyActor(recent.scope), { name: `Recent ${i}` }));
    await backdateHistory(db.url, "m.organization_id = $1", [old.id], "now() - interval '3 days'");

    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_RETENTION: "1d", WEBHOOK_RETENTION_SWEEP: "200ms" });
    await waitFor("every recent message delivered", () => target.countsByEnvelope().size === 5, 30_000);
    const gone = await waitFor("the old history dropped", async () => {
      const counts = await rowCounts(old.id);
      return counts.messages + counts.deliveries + counts.attempts === 0 ? counts : undefined;
    }, 30_000);
    expect(gone).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
    // Kept whole; each attempt is written once its batch's results are in (after the receiver has its delivery).
    const kept = await waitFor("the recent attempts recorded", async () => {
      const counts = await rowCounts(recent.id);
      return counts.attempts === 5 ? counts : undefined;
    }, 30_000);
    expect(kept).toEqual({ messages: 5, deliveries: 5, attempts: 5 });
    // Partitions made ahead at its start: 8 widths (a day's retention / 8: 3 hours each) past now.
    const partitions = await db.run(HistoryPartitions.use((h) => h.list(WEBHOOK_HISTORY)));
    const [now] = await sql<{ now: Date }>(db, "select now() as now");
    expect(partitions.at(-1)!.to.getTime()).toBeGreaterThanOrEqual(new Date(now!.now).getTime() + 8 * 3 * 3600_000 - 60_000);
    expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  });

  it("removes, in the same sweep, audit-log rows older than AUDIT_LOG_RETENTION, sessions and links a day after they expired, and API keys 30 days after they ended", async () => {
    const org = await createOrganization(db, "Auditing Caterers");
    await db.run(AuditLog.use((log) => log.record(operatorActor(org.scope, "root"), "x.done", "old")));
    await db.run(AuditLog.use((log) => log.record(operatorActor(org.scope, "root"), "x.done", "recent")));
    const link = await db.run(DeveloperSessions.use((sessions) => sessions.createLink(org.scope, "cli")));
    await db.run(DeveloperSessions.use((sessions) => sessions.signIn(link.token)));
    await sql(db, "update audit_log set at = now() - interval '3 days' where organization_id = ? and subject = 'old'", [org.id]);
    await sql(db, "update developer_sessions set expires_at = now() - interval '2 days' where organization_id = ?", [org.id]);
    await sql(db, "update developer_sign_in_links set expires_at = now() - interval '2 days' where organization_id = ?", [org.id]);
    // The read key revoked 31 days ago goes; the write key revoked 29 days ago stays listed.
    await sql(db, "update api_keys set revoked_at = now() - interval '31 days' where id = ?", [org.readKeyId]);
    await sql(db, "update api_keys set revoked_at = now() - interval '29 days' where id = ?", [org.writeKeyId]);
    const dispatcher = await startDispatcherProcess(db.url, { AUDIT_LOG_RETENTION: "2d", WEBHOOK_RETENTION_SWEEP: "200ms" });
    const left = await waitFor("the old rows removed", async () => {
      const [row] = await sql<{ audit: string[]; sessions: number; links: number; keys: number[] }>(
        db,
        `select (select array_agg(subject) from audit_log where organization_id = ?) as audit,
           (select count(*)::int from developer_sessions where organization_id = ?) as sessions,
           (select count(*)::int from developer_sign_in_links where organization_id = ?) as links,
           (select array_agg(id::int order by id) from api_keys where organization_id = ?) as keys`,
        [org.id, org.id, org.id, org.id],
      );
      return row!.sessions + row!.links === 0 && row!.audit.length === 1 && row!.keys.length === 1 ? row : undefined;
    }, 30_000);
    expect(left).toEqual({ audit: ["recent"], sessions: 0, links: 0, keys: [org.writeKeyId] });
    expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
  });
});
