import { describe, expect, it } from "vitest";
import { alertAddress, alertOutbox } from "./alert-outbox-harness.ts";
import { sql, waitFor } from "./dispatcher-harness.ts";

/**
 * One organization's burst of notices on the outbox runner, with the real outbox, LISTEN and SMTP:
 * its NOTIFYs (one per transaction, on the one `platter_notices` channel every organization shares)
 * are coalesced into a number of turns bounded by the work (a claim's worth of mails a turn), not by
 * the wake-ups, and another organization's alert committed behind the burst goes out in the turn in
 * progress or the next, with fewer than a claim's worth of the burst's mails before it.
 */

/** Notices in the burst: more than a fan-out's batch (200), so turns by organization are what let the quiet one through. */
const BURST = 500;
/** Mails one claim takes at most (the outbox's claim batch). */
const CLAIM_BATCH = 20;

const outbox = alertOutbox();

/** An organization with one confirmed address and an endpoint; returns its id and endpoint. */
const organizationWithAlerts = async (name: string) => {
  const org = await outbox.organizationWithAddresses(name, 1);
  return { id: org.id, endpointId: await outbox.endpoint(org.scope, `https://198.51.100.90/${org.id}`) };
};

/** One `failing` notice of the organization's endpoint, in a transaction of its own (so a NOTIFY of its own). */
const notice = (org: { id: number; endpointId: number }) => outbox.failingNotice(org.id, org.endpointId, "https://198.51.100.90/");

describe("a burst of one organization's notices", () => {
  it("is a bounded number of turns however many wake-ups, and another organization's alert goes out in the next turn", async () => {
    const busy = await organizationWithAlerts("Bursting Caterers");
    const quiet = await organizationWithAlerts("Quiet Caterers");
    const { db, smtp } = outbox;
    const queue = await outbox.queue();
    const mailed: Array<{ organizationId: number; turn: number }> = [];
    // The fallback poll far off: only wake-ups and work make turns here.
    const runner = outbox.mailRunner(queue.alertMails(), 600_000, {
      mailed: (mail) => mailed.push({ organizationId: mail.organizationId, turn: runner.turns }),
    });
    let heard = 0;
    const listener = queue.listen({ deliveries: () => {}, notices: () => { heard++; runner.wake(); } }, () => {});
    expect(listener.listening).toBe(true);
    runner.start();
    // The listener is connected once it has woken the runner to catch up.
    await waitFor("the listener", async () => (heard > 0 ? true : undefined));

    // A turn in progress, held at its first statement on the outbox by a lock the test holds.
    const blocker = await db.rawClient();
    await blocker.query("begin");
    await blocker.query("lock table alert_mails in share mode");
    const heardBefore = heard;
    await notice(busy);
    await waitFor("a turn waiting on the outbox", async () => {
      const [row] = await sql<{ n: number }>(db,
        "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%alert_mails%' and pid <> pg_backend_pid()");
      return row!.n > 0 ? true : undefined;
    });
    const heldTurn = runner.turns;
    // The rest of the burst and then the quiet organization's one notice, each its own transaction and NOTIFY.
    for (let i = 1; i < BURST; i++) await notice(busy);
    await notice(quiet);
    await waitFor("every NOTIFY heard", async () => (heard - heardBefore >= BURST + 1 ? true : undefined), 30_000);
    await blocker.query("rollback");
    await blocker.end();

    await waitFor("every alert mailed", async () => (smtp.received.length >= BURST + 1 ? true : undefined), 90_000);
    await waitFor("every mail settled", async () => (mailed.length >= BURST + 1 ? true : undefined), 30_000);
    await runner.stop();
    await listener.close();

    // Five hundred and one wake-ups; the turns are the work's: a claim's worth of mails each, and one that finds nothing.
    expect(heard - heardBefore).toBeGreaterThanOrEqual(BURST + 1);
    expect(runner.turns - heldTurn + 1).toBeLessThanOrEqual(Math.ceil((BURST + 1) / CLAIM_BATCH) + 2);
    // The quiet organization's alert: in the held turn or the next, behind fewer than a claim's worth of the burst's mails.
    const quietMail = mailed.findIndex((mail) => mail.organizationId === quiet.id);
    expect(quietMail).toBeGreaterThanOrEqual(0);
    expect(quietMail).toBeLessThan(CLAIM_BATCH);
    expect(mailed[quietMail]!.turn - heldTurn).toBeLessThanOrEqual(1);
    expect(await sql(db, "select status, count(*)::int as n from alert_mails group by status")).toEqual([{ status: "sent", n: BURST + 1 }]);
    expect(smtp.to(alertAddress(quiet.id, 1))).toHaveLength(1);
  }, 180_000);
});
