import { AlertRecipients, Clients } from "@platter/application";
import { apiKeyActor, generateSigningSecret, operatorActor, type OrgScope } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase, startTestSmtpServer, type TestDatabase, type TestSmtpServer } from "@platter/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type DispatcherProcess, endpointsOf, killLeftoverDispatchers, type Receiver, sql, startDispatcherProcess, startReceiver, waitFor,
} from "./dispatcher-harness.ts";

/**
 * Alert e-mails end to end: a dispatcher process sends each endpoint notice (failing, disabling
 * soon, disabled, recovered) by SMTP (nodemailer) to a real SMTP server on 127.0.0.1 (`smtp-server`),
 * whose mails `mailparser` reads: one per confirmed address per transition, never to an address that
 * did not confirm or to another organization's, never more for a flapping endpoint, and never twice
 * for a mail whose sender died during the SMTP call.
 */

const AREA = "https://area.platter.test";


/** `email` added to the organization's alerts and, when `confirm`, confirmed through its link's token. */
const alertAddress = async (db: TestDatabase, scope: OrgScope, email: string, confirm: boolean) => {
  const added = await db.run(AlertRecipients.add(operatorActor(scope, "test"), email));
  if (confirm) expect(await db.run(AlertRecipients.confirm(added.token))).toEqual({ id: added.id, email });
  return added;
};

const noticesOf = (db: TestDatabase, endpointId: number) =>
  sql<{ id: number; kind: string }>(db, "select id::int, kind from endpoint_notices where endpoint_id = ? order by id", [endpointId]);

describe("alert e-mails", () => {
  let db: TestDatabase;
  let smtp: TestSmtpServer;
  let dispatcher: DispatcherProcess;
  let failing: Receiver;

  beforeAll(async () => {
    db = await createTestDatabase(inject("pgAdminUrl"));
    smtp = await startTestSmtpServer();
    failing = await startReceiver(() => ({ status: 500 }));
    dispatcher = await startDispatcherProcess(db.url, {
      WEBHOOK_RETRY_SCHEDULE: "0s,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms",
      WEBHOOK_CIRCUIT_THRESHOLD: "2",
      WEBHOOK_CIRCUIT_COOLDOWN: "100ms",
      WEBHOOK_FAILURE_WINDOW: "1500ms",
      WEBHOOK_DISABLE_NOTICE: "1s",
      SMTP_URL: smtp.url,
      SMTP_FROM: "Platter alerts <alerts@platter.test>",
      DEVELOPER_AREA_PUBLIC_URL: AREA,
      LOG_LEVEL: "info",
    });
  });

  afterAll(async () => {
    if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
    await killLeftoverDispatchers();
    await smtp?.close();
    await failing?.close();
    await db?.dispose();
  });

  it("says once at start that mail goes through SMTP", async () => {
    // Logs are written in batches (every 200 ms at most): wait for the start line, then count it.
    await waitFor("the start line", async () => (dispatcher.output().includes("dispatcher running") ? true : undefined));
    expect(dispatcher.output().match(/via SMTP from Platter alerts <alerts@platter.test>/g)).toHaveLength(1);
  });

  it("mails each stage once to each confirmed address, with the endpoint, the reason, its last errors and its page; never an unconfirmed or another organization's address", async () => {
    const org = await createOrganization(db, "Failing Caterers");
    const other = await createOrganization(db, "Other Caterers");
    await alertAddress(db, org.scope, "dev@failing.example", true);
    await alertAddress(db, org.scope, "oncall@failing.example", true);
    await alertAddress(db, org.scope, "victim@elsewhere.example", false);
    await alertAddress(db, other.scope, "dev@other.example", true);
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, failing.url, [], generateSigningSecret())));
    for (const name of ["Ada", "Grace", "Edsger"]) await db.run(Clients.create(apiKeyActor(org.scope), { name }));

    await waitFor("the endpoint to be disabled", async () => (await endpointsOf(db, org.id)).find((e) => !e.enabled), 15_000);
    await waitFor("six alert e-mails", async () => (smtp.received.length >= 6 ? true : undefined), 15_000);
    // Settled, nothing more comes: every mail row is sent.
    await waitFor("every mail settled", async () =>
      (await sql<{ n: number }>(db, "select count(*)::int as n from alert_mails where status <> 'sent'"))[0]!.n === 0 ? true : undefined);

    const kinds = (await noticesOf(db, endpoint.id)).map((notice) => notice.kind);
    expect(kinds).toEqual(["failing", "disabling_soon", "disabled"]);
    for (const address of ["dev@failing.example", "oncall@failing.example"]) {
      const mails = smtp.to(address);
      expect(mails.map((mail) => mail.subject)).toEqual([
        `Platter: webhook endpoint ${endpoint.id} is failing`,
        `Platter: webhook endpoint ${endpoint.id} is about to be disabled`,
        `Platter: webhook endpoint ${endpoint.id} was disabled`,
      ]);
      for (const mail of mails) {
        expect(mail.from?.text).toBe('"Platter alerts" <alerts@platter.test>');
        expect(mail.text).toContain(`Your webhook endpoint ${failing.url} (endpoint ${endpoint.id})`);
        expect(mail.text).toContain(`See the endpoint: ${AREA}/webhooks/${endpoint.id}`);
        expect(mail.text).toMatch(/Its last errors:\n- \d{4}-\d\d-\d\dT[\d:.]+Z: HTTP 500/);
      }
      expect(mails[0]!.text).toMatch(/Why: \d+ failed attempts in a row, so its circuit is open\./);
      expect(mails[1]!.text).toMatch(/It will be disabled at \d{4}-\d\d-\d\dT[\d:.]+Z unless a delivery succeeds before then\./);
      expect(mails[2]!.text).toContain("Why: every delivery failed for the whole failure window.");
    }
    expect(smtp.to("victim@elsewhere.example")).toEqual([]);
    expect(smtp.to("dev@other.example")).toEqual([]);
    expect(smtp.received).toHaveLength(6);
  });

});

describe("a flapping endpoint", () => {
  let db: TestDatabase;
  let smtp: TestSmtpServer;
  let dispatcher: DispatcherProcess;
  let flapping: Receiver;
  let flappingFails = true;

  beforeAll(async () => {
    db = await createTestDatabase(inject("pgAdminUrl"));
    smtp = await startTestSmtpServer();
    flapping = await startReceiver(() => ({ status: flappingFails ? 503 : 204 }));
    // The default failure window (5 days): the endpoint flaps between failing and delivering, never near disabled.
    dispatcher = await startDispatcherProcess(db.url, {
      WEBHOOK_RETRY_SCHEDULE: "0s,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms",
      WEBHOOK_CIRCUIT_THRESHOLD: "2",
      WEBHOOK_CIRCUIT_COOLDOWN: "100ms",
      SMTP_URL: smtp.url,
      SMTP_FROM: "alerts@platter.test",
    });
  });

  afterAll(async () => {
    if (dispatcher) expect((await dispatcher.terminate()).code, dispatcher.output()).toBe(0);
    await killLeftoverDispatchers();
    await smtp?.close();
    await flapping?.close();
    await db?.dispose();
  });

  it("mails a flapping endpoint once per transition (failing, recovered, failing, recovered), never more", async () => {
    const org = await createOrganization(db, "Flapping Caterers");
    await alertAddress(db, org.scope, "dev@flapping.example", true);
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, flapping.url, [], generateSigningSecret())));
    const stage = async (fails: boolean, kinds: number) => {
      flappingFails = fails;
      // Several deliveries each way: the circuit opens on the second failure, and more failures or successes notice nothing more.
      for (let i = 0; i < 4; i++) await db.run(Clients.create(apiKeyActor(org.scope), { name: `Client ${kinds}.${i}` }));
      await waitFor(`${kinds} notices`, async () => ((await noticesOf(db, endpoint.id)).length >= kinds ? true : undefined), 15_000);
      await waitFor("every delivery settled", async () =>
        (await sql<{ n: number }>(db, "select count(*)::int as n from webhook_deliveries where endpoint_id = ? and status = 'pending'", [endpoint.id]))[0]!
          .n === 0 ? true : undefined, 15_000);
    };
    await stage(true, 1);
    await stage(false, 2);
    await stage(true, 3);
    await stage(false, 4);
    const notices = await noticesOf(db, endpoint.id);
    expect(notices.map((notice) => notice.kind)).toEqual(["failing", "recovered", "failing", "recovered"]);
    await waitFor("four alert e-mails", async () => (smtp.to("dev@flapping.example").length >= 4 ? true : undefined), 15_000);
    // One mail row per notice, each sent once; and exactly those four mails arrived.
    const rows = await sql<{ notice_id: number; status: string; attempts: number }>(db,
      "select m.notice_id::int, m.status, m.attempts from alert_mails m join endpoint_notices n on n.id = m.notice_id where n.endpoint_id = ? order by m.notice_id",
      [endpoint.id]);
    expect(rows).toEqual(notices.map((notice) => ({ notice_id: notice.id, status: "sent", attempts: 1 })));
    expect(smtp.to("dev@flapping.example").map((mail) => mail.subject)).toEqual([
      `Platter: webhook endpoint ${endpoint.id} is failing`,
      `Platter: webhook endpoint ${endpoint.id} delivers again`,
      `Platter: webhook endpoint ${endpoint.id} is failing`,
      `Platter: webhook endpoint ${endpoint.id} delivers again`,
    ]);
    expect(smtp.to("dev@flapping.example")[1]!.text).toContain("Why: a delivery succeeded, which ends its run of failures.");
  });
});

describe("a sender that dies during the SMTP call", () => {
  let db: TestDatabase;
  let stalling: TestSmtpServer;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    db = await createTestDatabase(inject("pgAdminUrl"));
    stalling = await startTestSmtpServer({ stall: true });
    smtp = await startTestSmtpServer();
  });

  afterAll(async () => {
    await killLeftoverDispatchers();
    await stalling?.close();
    await smtp?.close();
    await db?.dispose();
  });

  it("leaves its mail abandoned, never sent again by another dispatcher, while the next notice is mailed", async () => {
    const org = await createOrganization(db, "Crashing Caterers");
    await alertAddress(db, org.scope, "dev@crashing.example", true);
    const endpoint = await db.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://receiver.example/hooks", [], generateSigningSecret())));
    const notice = async (kind: string) => (await sql<{ id: number }>(db,
      `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status)
       values (?, ?, ?, 'a reason', 'https://receiver.example/hooks', 'unsent') returning id::int`, [org.id, endpoint.id, kind]))[0]!.id;
    const first = await notice("failing");

    const dying = await startDispatcherProcess(db.url, { SMTP_URL: stalling.url, SMTP_FROM: "alerts@platter.test" });
    await waitFor("the SMTP call under way", async () => (stalling.dataStarted() === 1 ? true : undefined), 15_000);
    const [sending] = await sql<{ status: string }>(db, "select status from alert_mails where notice_id = ?", [first]);
    expect(sending!.status).toBe("sending");
    expect((await dying.kill()).signal).toBe("SIGKILL");
    // Its lease runs out (moved, rather than waited for).
    await sql(db, "update alert_mails set lease_expires_at = now() - interval '1 second' where notice_id = ?", [first]);

    const next = await startDispatcherProcess(db.url, { SMTP_URL: smtp.url, SMTP_FROM: "alerts@platter.test" });
    const second = await notice("recovered");
    await waitFor("the next notice mailed", async () => (smtp.received.length === 1 ? true : undefined), 15_000);
    expect((await next.terminate()).code).toBe(0);
    const rows = await sql<{ notice_id: number; status: string; attempts: number }>(db,
      "select notice_id::int, status, attempts from alert_mails order by notice_id");
    expect(rows).toEqual([
      { notice_id: first, status: "abandoned", attempts: 1 },
      { notice_id: second, status: "sent", attempts: 1 },
    ]);
    expect(smtp.received.map((mail) => mail.subject)).toEqual([`Platter: webhook endpoint ${endpoint.id} delivers again`]);
    expect(stalling.dataStarted()).toBe(1);
  });
});

describe("an idle mailer", () => {
  let quiet: TestDatabase;
  let mailing: TestDatabase;
  let smtp: TestSmtpServer;

  beforeAll(async () => {
    quiet = await createTestDatabase(inject("pgAdminUrl"));
    mailing = await createTestDatabase(inject("pgAdminUrl"));
    smtp = await startTestSmtpServer();
  });

  afterAll(async () => {
    await killLeftoverDispatchers();
    await smtp?.close();
    await quiet?.dispose();
    await mailing?.dispose();
  });

  /** Transactions committed in `db`'s database so far (every statement outside one counts as one). */
  const commits = async (db: TestDatabase) =>
    Number((await sql<{ n: string }>(db, "select xact_commit::text as n from pg_stat_database where datname = current_database()"))[0]!.n);

  it("runs about as many statements as a dispatcher without SMTP (it waits for notices' NOTIFY), and still mails a new notice at once", async () => {
    // Side by side, each on a database of its own: one dispatcher with SMTP_URL, one without.
    const without = await startDispatcherProcess(quiet.url, {});
    const withMail = await startDispatcherProcess(mailing.url, { SMTP_URL: smtp.url, SMTP_FROM: "alerts@platter.test" });
    await new Promise((done) => setTimeout(done, 2000));
    const before = { without: await commits(quiet), withMail: await commits(mailing) };
    await new Promise((done) => setTimeout(done, 6000));
    const spent = { without: (await commits(quiet)) - before.without, withMail: (await commits(mailing)) - before.withMail };
    // Polling every DISPATCHER_POLL_INTERVAL (200 ms here) the mailer alone ran three statements a round: some 75–90 more in
    // these 6 s than the dispatcher beside it. Counters are flushed about once a second, and a loaded machine skews the
    // two processes' rounds, so the margin is half of that.
    expect(spent.withMail, JSON.stringify(spent)).toBeLessThan(spent.without + 40);

    const org = await createOrganization(mailing, "Idle Caterers");
    await alertAddress(mailing, org.scope, "dev@idle.example", true);
    const endpoint = await mailing.run(WebhookEndpointRepository.use((r) => r.add(org.scope, "https://receiver.example/idle", [], generateSigningSecret())));
    await sql(mailing,
      `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status)
       values (?, ?, 'failing', 'a reason', 'https://receiver.example/idle', 'unsent')`, [org.id, endpoint.id]);
    // Well within the idle mailer's own look (every 30 s): the notice's NOTIFY woke it.
    await waitFor("the notice mailed", async () => (smtp.received.length === 1 ? true : undefined), 10_000);
    expect(smtp.to("dev@idle.example").map((mail) => mail.subject)).toEqual([`Platter: webhook endpoint ${endpoint.id} is failing`]);
    expect((await withMail.terminate()).code).toBe(0);
    expect((await without.terminate()).code).toBe(0);
  });
});
