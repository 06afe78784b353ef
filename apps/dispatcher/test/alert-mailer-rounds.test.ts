import { type AlertMailStorage, generateSigningSecret, type OrgScope } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import { createOrganization, createTestDatabase, startTestSmtpServer, type TestDatabase, type TestSmtpServer } from "@platter/testing";
import { alertMailChannel, OutboxRunner, smtpMailSender } from "@platter/webhooks";
import { Effect } from "effect";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sql } from "./dispatcher-harness.ts";

/**
 * The mailer's turns on the real outbox: a notice fanned out to many addresses is one read of its
 * endpoint's last errors, not one per mail. The store is the real one; only its `lastErrors` calls
 * are counted on the way through.
 */

let db: TestDatabase;
let smtp: TestSmtpServer;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  smtp = await startTestSmtpServer();
});
afterAll(async () => {
  await smtp?.close();
  await db?.dispose();
});

/** An endpoint of `scope` with a `failing` notice not yet fanned out. */
const failingEndpoint = async (scope: OrgScope, url: string) => {
  const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(scope, url, [], generateSigningSecret())));
  await sql(db,
    `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, mail_status)
     values (?, ?, 'failing', 'HTTP 500', ?, 'unsent', 'pending')`, [scope.organizationId, endpoint.id, url]);
  return endpoint.id;
};

describe("a mailer turn", () => {
  it("reads each endpoint's last errors once for all the addresses its notice goes to", async () => {
    const org = await createOrganization(db, "Many addresses");
    await sql(db,
      `insert into alert_recipients (organization_id, email, confirmed_at)
       select ?, 'dev' || g || '@many.example', now() from generate_series(1, 6) g`, [org.id]);
    const first = await failingEndpoint(org.scope, "https://198.51.100.80/first");
    const second = await failingEndpoint(org.scope, "https://198.51.100.80/second");
    const store = await db.run(DeliveryQueue.use((queue) => Effect.succeed(queue.alertMails())));
    const read: Array<[number, number]> = [];
    const counted: AlertMailStorage = {
      ...store,
      lastErrors: (organizationId, endpointId) => {
        read.push([organizationId, endpointId]);
        return store.lastErrors(organizationId, endpointId);
      },
    };
    const mailer = new OutboxRunner(alertMailChannel(counted, smtpMailSender({ smtpUrl: smtp.url, from: "alerts@platter.test" }), {
      developerAreaUrl: "https://area.platter.test", leaseMs: 60_000,
    }), { pollIntervalMs: 1000, leaseMs: 60_000 });

    expect(await mailer.turn()).toBe(12);
    await mailer.stop();

    expect(smtp.received).toHaveLength(12);
    expect(read.sort((a, b) => a[1] - b[1])).toEqual([[org.id, first], [org.id, second]]);
    expect(await sql(db, "select status, count(*)::int as n from alert_mails group by status")).toEqual([{ status: "sent", n: 12 }]);
  });
});
