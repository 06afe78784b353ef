import { apiKeyActor, generateSigningSecret, operatorActor } from "@platter/domain";
import { AuditLog, DeveloperSessions, WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor } from "./dispatcher-harness.ts";
import { Clients } from "@platter/application";

/** Bounded history, in a real dispatcher process: under sustained load the tables stay small, and once it stops they empty. */

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

const ROUNDS = 20;
const PER_ROUND = 10;

const rowCounts = async () => {
  const [row] = await sql<{ messages: number; deliveries: number; attempts: number }>(
    db,
    `select (select count(*)::int from webhook_messages) as messages, (select count(*)::int from webhook_deliveries) as deliveries,
       (select count(*)::int from webhook_attempts) as attempts`,
  );
  return row!;
};

describe("delivery history retention", () => {
  it(`keeps the tables small while ${ROUNDS * PER_ROUND} messages are delivered with a 1 s window, and empties them after`, async () => {
    const dispatcher = await startDispatcherProcess(db.url, { WEBHOOK_RETENTION: "1s", WEBHOOK_RETENTION_SWEEP: "200ms" });
    const org = await createOrganization(db, "Retaining Caterers");
    await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, target.url, [], generateSigningSecret())));
    const observed: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PER_ROUND; i++) {
        await db.run(Clients.create(apiKeyActor(org.scope), { name: `Client ${round}-${i}` }));
      }
      observed.push((await rowCounts()).deliveries);
      await new Promise((done) => setTimeout(done, 250));
    }
    await waitFor("every message delivered", () => target.countsByEnvelope().size === ROUNDS * PER_ROUND, 30_000);
    // Produced at about 40 a second and kept about a second: far fewer rows at any time than were produced.
    expect(Math.max(...observed)).toBeLessThan((ROUNDS * PER_ROUND) / 2);
    expect(observed.length).toBe(ROUNDS);
    const empty = await waitFor(
      "the history removed",
      async () => {
        const counts = await rowCounts();
        return counts.messages + counts.deliveries + counts.attempts === 0 ? counts : undefined;
      },
      30_000,
    );
    expect(empty).toEqual({ messages: 0, deliveries: 0, attempts: 0 });
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
