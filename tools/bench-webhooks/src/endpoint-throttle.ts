import { setTimeout as sleep } from "node:timers/promises";
import { generateSigningSecret } from "@platter/domain";
import { WebhookEndpointRepository } from "@platter/persistence";
import { createOrganization, createTestDatabase } from "@platter/testing";
import { enqueueBacklog } from "./platter-outbox.ts";
import { startReceiver } from "./receiver.ts";
import type { IsolationRun } from "./tenant-isolation.ts";
import { startDispatcherProcess } from "./worker-processes.ts";

/**
 * `throttle` (issue 31): an endpoint its organization throttled, with a backlog queued, drained by
 * two dispatcher processes: the rate its receiver sees over a window, and how fast the
 * organization's other endpoint, with as many queued, drains meanwhile.
 */

/** Sizes of `throttle`. */
export interface ThrottleSettings {
  /** The throttle, deliveries per second. */
  readonly perSecond: number;
  /** Deliveries queued at each of the two endpoints. */
  readonly queued: number;
  /** The window the throttled receiver's rate is counted over, seconds. */
  readonly windowSeconds: number;
  readonly dispatchers: number;
}

/** What `throttle` measured. */
export interface ThrottleResult {
  readonly perSecond: number;
  readonly queued: number;
  readonly dispatchers: number;
  /** Deliveries the throttled receiver saw in the window, and the window's length. */
  readonly windowArrivals: number;
  readonly windowSeconds: number;
  /** The other endpoint: its deliveries, seconds from its first arrival to its last, and what the throttled one had seen by then. */
  readonly otherDeliveries: number;
  readonly otherSeconds: number;
  /** Seconds the other endpoint took for as many with no throttled endpoint beside it (its baseline). */
  readonly aloneSeconds: number;
  readonly throttledMeanwhile: number;
  readonly duplicates: number;
  readonly badSignatures: number;
}

const count = (n: number) => n.toLocaleString("en-US");

/** One drain on a fresh database: the other endpoint's backlog, beside the throttled endpoint's when `throttle` is given. */
const drain = async (run: IsolationRun, s: ThrottleSettings, throttle: number | undefined) => {
  const throttledReceiver = await startReceiver(run.signatureHeader);
  const otherReceiver = await startReceiver(run.signatureHeader);
  const db = await createTestDatabase(run.adminUrl);
  try {
    const org = await createOrganization(db, "Small Caterer", "EUR");
    const add = (url: string) => db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, url, ["client.created"], generateSigningSecret())));
    const other = await add(otherReceiver.url);
    otherReceiver.reset(other.secret);
    if (throttle !== undefined) {
      const throttled = await add(throttledReceiver.url);
      await db.run(WebhookEndpointRepository.use((e) => e.setThrottle(org.scope, throttled.id, throttle)));
      throttledReceiver.reset(throttled.secret);
    }
    await enqueueBacklog(db, org.id, s.queued);
    const dispatchers = await Promise.all(Array.from({ length: s.dispatchers }, () =>
      startDispatcherProcess(db.url, run.concurrency, { endpointCap: "production" })));
    try {
      await Promise.all(dispatchers.map((d) => d.ready));
      await otherReceiver.waitFor(s.queued, 600_000);
      const throttledMeanwhile = throttledReceiver.arrivals.size;
      const otherTimes = [...otherReceiver.arrivals.values()];
      const otherSeconds = (Math.max(...otherTimes) - Math.min(...otherTimes)) / 1000;
      // The window starts once the other endpoint is done (past the bucket's first second's worth), and ends before the backlog does.
      const from = Date.now();
      if (throttle !== undefined) await sleep(s.windowSeconds * 1000);
      const to = Date.now();
      return {
        windowArrivals: [...throttledReceiver.arrivals.values()].filter((at) => at > from && at <= to).length, windowSeconds: (to - from) / 1000,
        otherDeliveries: otherReceiver.arrivals.size, otherSeconds, throttledMeanwhile,
        duplicates: throttledReceiver.duplicates() + otherReceiver.duplicates(),
        badSignatures: throttledReceiver.badSignatures() + otherReceiver.badSignatures(),
      };
    } finally {
      await Promise.all(dispatchers.map((d) => d.stop()));
    }
  } finally {
    await db.dispose();
    await Promise.all([throttledReceiver.close(), otherReceiver.close()]);
  }
};

/**
 * Runs `throttle`: the other endpoint's backlog drained alone (its baseline), then again beside the
 * throttled endpoint's, each on a fresh database with receivers of their own.
 */
export const measureThrottle = async (run: IsolationRun, s: ThrottleSettings): Promise<ThrottleResult> => {
  run.log(`throttle: ${count(s.queued)} queued at one endpoint alone, ${s.dispatchers} dispatchers…`);
  const alone = await drain(run, s, undefined);
  run.log(`throttle: ${count(s.queued)} queued at it and at another throttled to ${s.perSecond}/s, ${s.dispatchers} dispatchers…`);
  const beside = await drain(run, s, s.perSecond);
  return {
    perSecond: s.perSecond, queued: s.queued, dispatchers: s.dispatchers, windowArrivals: beside.windowArrivals,
    windowSeconds: beside.windowSeconds, otherDeliveries: beside.otherDeliveries, otherSeconds: beside.otherSeconds,
    aloneSeconds: alone.otherSeconds, throttledMeanwhile: beside.throttledMeanwhile,
    duplicates: alone.duplicates + beside.duplicates, badSignatures: alone.badSignatures + beside.badSignatures,
  };
};

/** The throttled receiver's deliveries per second over the window. */
export const throttledRate = (r: ThrottleResult): number => r.windowArrivals / r.windowSeconds;

/** The other endpoint's deliveries per second beside the throttled one, and alone. */
export const otherRates = (r: ThrottleResult): { readonly beside: number; readonly alone: number } => ({
  beside: r.otherDeliveries / Math.max(0.001, r.otherSeconds), alone: r.otherDeliveries / Math.max(0.001, r.aloneSeconds),
});

/** How `throttle` is measured, for the report. */
export const throttleSetupOf = (concurrency: number, s: ThrottleSettings): string =>
  `One organization with two endpoints subscribed to \`client.created\`, each on a receiver of its own (node:http on 127.0.0.1, ` +
  `answering 200 at once and checking every signature); one throttled to ${s.perSecond} deliveries/s (\`WebhookEndpointRepository.setThrottle\`); ` +
  `${count(s.queued)} messages committed in one statement (a delivery to each endpoint), then ${s.dispatchers} dispatcher processes ` +
  `(DISPATCHER_CONCURRENCY=${concurrency}, production endpoint cap) start. Once the other endpoint has all its deliveries, the ` +
  `throttled receiver's arrivals are counted over ${s.windowSeconds} s. Its baseline: the same drain of the other endpoint alone ` +
  "(no throttled endpoint, a fresh database), first; its deliveries/s run from its first arrival to its last.";
