import { type AlertMailStorage, type ClaimedAlertMail, generateSigningSecret, type OrgScope } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { DeliveryQueue } from "@platter/persistence/dispatcher";
import {
  createOrganization, createTestDatabase, type OrganizationFixture, startTestSmtpServer, type TestDatabase, type TestSmtpServer,
} from "@platter/testing";
import { type AlertMailObserver, alertMailChannel, type MailedAlert, OutboxRunner, smtpMailSender } from "@platter/webhooks";
import { Effect } from "effect";
import { afterAll, beforeAll, inject } from "vitest";
import { sql } from "./dispatcher-harness.ts";

/**
 * The alert-mail outbox in process, for the tests of its runner: a test file's own database and SMTP
 * server (made before its tests, closed after them), organizations with confirmed alert addresses,
 * `failing` notices of their endpoints, and an `OutboxRunner` of the real channel (`alertMailChannel`,
 * SMTP to that server).
 */

/** The runner of the alert-mail channel, as `AlertOutbox.mailRunner` makes it. */
export type AlertMailRunner = OutboxRunner<ClaimedAlertMail, MailedAlert>;

/** What `alertOutbox()` gives a test file (its database and SMTP server exist once its `beforeAll` ran). */
export interface AlertOutbox {
  readonly db: TestDatabase;
  readonly smtp: TestSmtpServer;
  /** The dispatcher's store on the file's database: the alert mails' storage (`alertMails()`) and LISTEN (`listen`). */
  readonly queue: () => Promise<DeliveryQueue["Service"]>;
  /** A new organization with `addresses` confirmed alert addresses, `alertAddress(its id, 1)` to `alertAddress(its id, addresses)`. */
  readonly organizationWithAddresses: (name: string, addresses: number) => Promise<OrganizationFixture>;
  /** A new endpoint of `scope` at `url`; returns its id. */
  readonly endpoint: (scope: OrgScope, url: string) => Promise<number>;
  /** One `failing` notice of the endpoint (`HTTP 500`), not fanned out yet, in a transaction of its own (so a NOTIFY of its own). */
  readonly failingNotice: (organizationId: number, endpointId: number, endpointUrl: string) => Promise<void>;
  /**
   * A runner of the alert-mail channel over `storage` (the real outbox's, or a wrapper of it), sending to the
   * file's SMTP server, its fallback poll every `pollIntervalMs`; not started.
   */
  readonly mailRunner: (storage: AlertMailStorage, pollIntervalMs: number, observer?: AlertMailObserver) => AlertMailRunner;
}

/** The `n`th confirmed alert address `AlertOutbox.organizationWithAddresses` gives an organization. */
export const alertAddress = (organizationId: number, n: number): string => `dev${n}@org-${organizationId}.example`;

/** A mail's lease, and the runner's. */
const LEASE_MS = 60_000;

/** Registers the test file's `beforeAll` (database, SMTP server) and `afterAll` (both closed), and gives the outbox's fixtures. */
export const alertOutbox = (): AlertOutbox => {
  let db: TestDatabase | undefined;
  let smtp: TestSmtpServer | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(inject("pgAdminUrl"));
    smtp = await startTestSmtpServer();
  });
  afterAll(async () => {
    await smtp?.close();
    await db?.dispose();
  });
  const made = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is made in the file's beforeAll`);
    return value;
  };
  const outbox: AlertOutbox = {
    get db() {
      return made(db, "the database");
    },
    get smtp() {
      return made(smtp, "the SMTP server");
    },
    queue: () => outbox.db.run(DeliveryQueue.use(Effect.succeed)),
    organizationWithAddresses: async (name, addresses) => {
      const org = await createOrganization(outbox.db, name);
      await sql(outbox.db,
        `insert into alert_recipients (organization_id, email, confirmed_at)
         select ?, 'dev' || g || '@org-' || ? || '.example', now() from generate_series(1, ?) g`, [org.id, org.id, addresses]);
      return org;
    },
    endpoint: async (scope, url) =>
      (await outbox.db.run(WebhookEndpointRepository.use((r) => r.add(scope, url, [], generateSigningSecret())))).id,
    failingNotice: async (organizationId, endpointId, endpointUrl) => {
      await sql(outbox.db,
        `insert into endpoint_notices (organization_id, endpoint_id, kind, reason, endpoint_url, operator_status, mail_status)
         values (?, ?, 'failing', 'HTTP 500', ?, 'unsent', 'pending')`, [organizationId, endpointId, endpointUrl]);
    },
    mailRunner: (storage, pollIntervalMs, observer) =>
      new OutboxRunner(
        alertMailChannel(storage, smtpMailSender({ smtpUrl: outbox.smtp.url, from: "alerts@platter.test" }), {
          developerAreaUrl: "https://area.platter.test", leaseMs: LEASE_MS,
        }, observer),
        { pollIntervalMs, leaseMs: LEASE_MS },
      ),
  };
  return outbox;
};
