import type { AlertMailStorage, OrgScope } from "@platter/domain";
import { describe, expect, it } from "vitest";
import { alertOutbox } from "./alert-outbox-harness.ts";
import { sql } from "./dispatcher-harness.ts";

/**
 * The mailer's turns on the real outbox: a notice fanned out to many addresses is one read of its
 * endpoint's last errors, not one per mail. The store is the real one; only its `lastErrors` calls
 * are counted on the way through.
 */

const outbox = alertOutbox();

/** An endpoint of `scope` with a `failing` notice not yet fanned out. */
const failingEndpoint = async (scope: OrgScope, url: string) => {
  const endpoint = await outbox.endpoint(scope, url);
  await outbox.failingNotice(scope.organizationId, endpoint, url);
  return endpoint;
};

describe("a mailer turn", () => {
  it("reads each endpoint's last errors once for all the addresses its notice goes to", async () => {
    const { db, smtp } = outbox;
    const org = await outbox.organizationWithAddresses("Many addresses", 6);
    const first = await failingEndpoint(org.scope, "https://198.51.100.80/first");
    const second = await failingEndpoint(org.scope, "https://198.51.100.80/second");
    const store = (await outbox.queue()).alertMails();
    const read: Array<[number, number]> = [];
    const counted: AlertMailStorage = {
      ...store,
      lastErrors: (organizationId, endpointId) => {
        read.push([organizationId, endpointId]);
        return store.lastErrors(organizationId, endpointId);
      },
    };
    const mailer = outbox.mailRunner(counted, 1000);

    expect(await mailer.turn()).toBe(12);
    await mailer.stop();

    expect(smtp.received).toHaveLength(12);
    expect(read.sort((a, b) => a[1] - b[1])).toEqual([[org.id, first], [org.id, second]]);
    expect(await sql(db, "select status, count(*)::int as n from alert_mails group by status")).toEqual([{ status: "sent", n: 12 }]);
  });
});
