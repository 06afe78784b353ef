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
  readonly throttledMeanwhile: number;
  readonly duplicates: number;
  readonly badSignatures: number;
}

const count = (n: number) => n.toLocaleString("en-US");

/** Runs `throttle`: a fresh database, one organization with a throttled endpoint and another, each on a receiver of its own. */
export const measureThrottle = async (run: IsolationRun, s: ThrottleSettings): Promise<ThrottleResult> => {
  const throttledReceiver = await startReceiver(run.signatureHeader);
  const otherReceiver = await startReceiver(run.signatureHeader);
  const db = await createTestDatabase(run.adminUrl);
  try {
    const org = await createOrganization(db, "Small Caterer", "EUR");
    const add = (url: string) => db.run(WebhookEndpointRepository.use((e) => e.add(org.scope, url, ["client.created"], generateSigningSecret())));
    const throttled = await add(throttledReceiver.url);
    const other = await add(otherReceiver.url);
    await db.run(WebhookEndpointRepository.use((e) => e.setThrottle(org.scope, throttled.id, s.perSecond)));
    throttledReceiver.reset(throttled.secret);
    otherReceiver.reset(other.secret);
    await enqueueBacklog(db, org.id, s.queued);
    run.log(`throttle: ${count(s.queued)} queued at an endpoint throttled to ${s.perSecond}/s and at another, ${s.dispatchers} dispatchers…`);
    const dispatchers = await Promise.all(Array.from({ length: s.dispatchers }, () =>
      startDispatcherProcess(db.url, run.concurrency, { endpointCap: "production" })));
    try {
      await Promise.all(dispatchers.map((d) => d.ready));
      await otherReceiver.waitFor(s.queued, 600_000);
      const throttledMeanwhile = throttledReceiver.arrivals.size;
      const otherTimes = [...otherReceiver.arrivals.values()];
      const otherSeconds = (Math.max(...otherTimes) - Math.min(...otherTimes)) / 1000;
      // The window starts after the bucket's first second's worth, and ends before the backlog does.
      const from = Date.now();
      await sleep(s.windowSeconds * 1000);
      const to = Date.now();
      const windowArrivals = [...throttledReceiver.arrivals.values()].filter((at) => at > from && at <= to).length;
      return {
        perSecond: s.perSecond, queued: s.queued, dispatchers: s.dispatchers, windowArrivals, windowSeconds: (to - from) / 1000,
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

/** The throttled receiver's deliveries per second over the window. */
export const throttledRate = (r: ThrottleResult): number => r.windowArrivals / r.windowSeconds;

/** How `throttle` is measured, for the report. */
export const throttleSetupOf = (concurrency: number, s: ThrottleSettings): string =>
  `One organization with two endpoints subscribed to \`client.created\`, each on a receiver of its own (node:http on 127.0.0.1, ` +
  `answering 200 at once and checking every signature); one throttled to ${s.perSecond} deliveries/s (\`WebhookEndpointRepository.setThrottle\`); ` +
  `${count(s.queued)} messages committed in one statement (a delivery to each endpoint), then ${s.dispatchers} dispatcher processes ` +
  `(DISPATCHER_CONCURRENCY=${concurrency}, production endpoint cap) start. Once the other endpoint has all its deliveries, the ` +
  `throttled receiver's arrivals are counted over ${s.windowSeconds} s.`;
