import { generateSigningSecret } from "@platter/domain";
import { createOrganization, createTestDatabase, type OrganizationFixture, type TestDatabase } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DeliveryQueue } from "../src/dispatcher.ts";
import { WebhookEndpointRepository } from "../src/index.ts";

/**
 * The alert mail outbox is every organization's, and one mailer sends it in claims of twenty:
 * organizations take turns in a claim, so one organization's many notices (many endpoints failing
 * at once, ten addresses each) cannot hold back another organization's mail until they are all sent.
 * The fan-out that writes the mails of new notices takes turns the same way.
 */

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
});
afterAll(() => db?.dispose());

const rows = <Row>(statement: string, params: unknown[] = []) => db.orm.em.getConnection().execute<Row[]>(statement, params);

/** `count` due mails of one notice of `org`'s endpoint, each to an address of its own, due `agoSeconds` ago. */
const mailsOf = async (org: OrganizationFixture, count: number, agoSeconds: number) => {
  const endpoint = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://198.51.100.70/${org.id}`, [], generateSigningSecret())))).id;
  const [notice] = await rows<{ id: string }>(
    `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, mail_status)
     values (?, ?, 'failing', 'HTTP 500', 'https://198.51.100.70/', 'unsent', 'done') returning id`, [org.id, endpoint]);
  await rows(
    `with recipients as (
       insert into alert_recipients (organization_id, email, confirmed_at)
       select ?, 'dev' || g || '@org-' || ? || '.example', now() from generate_series(1, ?) g returning id, email
     )
     insert into alert_mails (organization_id, notice_id, recipient_id, email, next_attempt_at)
     select ?, ?, id, email, now() - ? * interval '1 second' from recipients`,
    [org.id, org.id, count, org.id, notice!.id, agoSeconds],
  );
};

describe("claiming alert mails", () => {
  it("lets organizations take turns: another organization's one mail is in the first claim behind sixty older ones", async () => {
    const busy = await createOrganization(db, "Many failing");
    const quiet = await createOrganization(db, "One failing");
    await mailsOf(busy, 60, 60);
    await mailsOf(quiet, 1, 0);
    const claimed = await db.run(DeliveryQueue.use((queue) => queue.alertMails().claim(60_000)));
    expect(claimed).toHaveLength(20);
    expect(claimed.filter((mail) => mail.organizationId === quiet.id)).toHaveLength(1);
    expect(claimed.filter((mail) => mail.organizationId === busy.id)).toHaveLength(19);
  });

  it("fans out by organization turns: another organization's newer notice is in the first fan-out behind 300 older ones", async () => {
    const busy = await createOrganization(db, "Bursting");
    const quiet = await createOrganization(db, "Quiet");
    for (const org of [busy, quiet]) {
      await rows("insert into alert_recipients (organization_id, email, confirmed_at) values (?, ?, now())", [org.id, `dev@org-${org.id}.example`]);
    }
    const noticeOf = async (org: OrganizationFixture, count: number) => {
      const endpoint = (await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, `https://198.51.100.71/${org.id}`, [], generateSigningSecret())))).id;
      await rows(
        `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, mail_status)
         select ?, ?, 'failing', 'HTTP 500', 'https://198.51.100.71/', 'unsent', 'pending' from generate_series(1, ?)`, [org.id, endpoint, count]);
    };
    await noticeOf(busy, 300);
    await noticeOf(quiet, 1);

    expect(await db.run(DeliveryQueue.use((queue) => queue.alertMails().fanOut()))).toBe(200);
    const written = await rows<{ organization_id: string; n: number }>(
      "select organization_id::text, count(*)::int as n from alert_mails where organization_id in (?, ?) group by organization_id order by 1", [busy.id, quiet.id]);
    expect(written).toEqual([{ organization_id: String(busy.id), n: 199 }, { organization_id: String(quiet.id), n: 1 }].sort((a, b) => a.organization_id.localeCompare(b.organization_id)));
  });
});
