import type { DeliveryQueue } from "@platter/persistence/dispatcher";
import { Effect } from "effect";
import { percentile } from "./report.ts";

/**
 * A delivery queue that times every call of the real one, for the profile scenario: where a
 * dispatcher's time goes (claims, result writes) and how big each batch was.
 */

/** Timings of one store operation over a run. */
export interface OperationTimings {
  readonly operation: string;
  readonly calls: number;
  readonly totalMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Mean rows per call: deliveries claimed, results written. */
  readonly meanRows: number;
  /** Mean `limit` asked for (claims), else the same as `meanRows`. */
  readonly meanAsked: number;
}

interface Samples {
  readonly durations: number[];
  rows: number;
  asked: number;
}

/** Wraps `store`; `timings()` summarises every call made so far. */
type Queue = DeliveryQueue["Service"];

export const timedStore = (store: Queue): { store: Queue; timings: () => OperationTimings[] } => {
  const samples = new Map<string, Samples>();
  /** Calls that found nothing to do are counted apart (`claimDue (none)`): they are the loop's idle cost. */
  const time = <T, E>(operation: string, asked: number, call: () => Effect.Effect<T, E>, rowsOf: (result: T) => number): Effect.Effect<T, E> =>
    Effect.suspend(() => {
      const began = performance.now();
      return Effect.map(call(), (result) => {
        const rows = rowsOf(result);
        const name = rows === 0 ? `${operation} (none)` : operation;
        const entry = samples.get(name) ?? { durations: [], rows: 0, asked: 0 };
        entry.durations.push(performance.now() - began);
        entry.rows += rows;
        entry.asked += asked;
        samples.set(name, entry);
        return result;
      });
    });
  return {
    store: {
      claimDue: (limit, leaseMs, policy, held) =>
        time("claimDue", limit, () => store.claimDue(limit, leaseMs, policy, held), (claimed) => claimed.due.length + claimed.unreadable.length),
      recordAttempts: (records, policy) =>
        time("recordAttempts", records.length, () => store.recordAttempts(records, policy), () => records.length),
      queueDepth: () => time("queueDepth", 1, () => store.queueDepth(), (n) => n),
      endpointStats: () => time("endpointStats", 1, () => store.endpointStats(), (stats) => stats.length),
      nextDueInMs: (policy) => time("nextDueInMs", 1, () => store.nextDueInMs(policy), (ms) => (ms === undefined ? 0 : 1)),
      listen: store.listen,
      operatorNotices: store.operatorNotices,
      alertMails: store.alertMails,
    },
    timings: () =>
      [...samples].sort(([a], [b]) => a.localeCompare(b)).map(([operation, s]) => ({
        operation,
        calls: s.durations.length,
        totalMs: s.durations.reduce((a, d) => a + d, 0),
        p50Ms: percentile(s.durations, 0.5),
        p99Ms: percentile(s.durations, 0.99),
        maxMs: s.durations.reduce((a, d) => Math.max(a, d), 0),
        meanRows: s.rows / s.durations.length,
        meanAsked: s.asked / s.durations.length,
      })),
  };
};
