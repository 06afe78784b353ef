import { setTimeout as sleep } from "node:timers/promises";
import { postgresCpuSeconds, processCpuSeconds } from "./process-cpu.ts";
import type { Receiver } from "./receiver.ts";
import { type LatencyResult, percentile, type ThroughputResult } from "./report.ts";
import type { WorkerProcess } from "./worker-processes.ts";

/** The two measurements, the same for every system: drain a backlog, and time single events at a low rate. */

/** What a measurement needs from the run. */
export interface Bench {
  readonly receiver: Receiver;
  readonly postmasterPid: number | undefined;
  readonly timeoutMs: number;
}

const bounds = (values: Iterable<number>): { first: number; last: number } => {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < first) first = v;
    if (v > last) last = v;
  }
  return { first, last };
};

const sum = (values: ReadonlyArray<number | undefined>): number | undefined =>
  values.some((v) => v === undefined) ? undefined : values.reduce<number>((a, v) => a + v!, 0);

/** Rejects if any worker fails to start; never resolves otherwise. */
const startFailure = (workers: readonly WorkerProcess[]): Promise<never> =>
  Promise.all(workers.map((w) => w.ready)).then(() => new Promise<never>(() => {}));

/**
 * Starts the worker process(es) on a database already holding `deliveries` pending items and
 * times them until the receiver has seen every one. Worker CPU is read at that moment.
 */
export const drainBacklog = async (
  bench: Bench,
  name: string,
  deliveries: number,
  start: () => Promise<WorkerProcess[]>,
): Promise<ThroughputResult> => {
  const { receiver, postmasterPid } = bench;
  const postgresBefore = postgresCpuSeconds(postmasterPid);
  const receiverBefore = process.cpuUsage();
  const workers = await start();
  let workerCpuSeconds: number | undefined;
  let postgresAfter: number | undefined;
  try {
    await Promise.race([receiver.waitFor(deliveries, bench.timeoutMs), startFailure(workers)]);
    workerCpuSeconds = sum(workers.map((w) => processCpuSeconds(w.pid)));
    postgresAfter = postgresCpuSeconds(postmasterPid);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
  const receiverCpu = process.cpuUsage(receiverBefore);
  const { first, last } = bounds(receiver.arrivals.values());
  const spawnedAt = Math.min(...workers.map((w) => w.spawnedAt));
  return {
    name,
    deliveries,
    wallSeconds: (last - spawnedAt) / 1000,
    drainSeconds: (last - first) / 1000,
    workerCpuSeconds,
    postgresCpuSeconds: postgresAfter === undefined || postgresBefore === undefined ? undefined : postgresAfter - postgresBefore,
    receiverCpuSeconds: (receiverCpu.user + receiverCpu.system) / 1e6,
    duplicates: receiver.duplicates(),
    badSignatures: receiver.badSignatures(),
  };
};

/** How single events are committed and, afterwards, when each committed by the database's clock. */
export interface SingleEvents {
  /** Commits event `n` on its own; returns its envelope id. */
  readonly commitOne: (n: number) => Promise<string>;
  /** Envelope id → commit time (epoch ms) as the database recorded it. */
  readonly commitTimes: (envelopeIds: readonly string[]) => Promise<Map<string, number>>;
}

/**
 * With the worker running and idle, commits single events at `rate` per second for `seconds`,
 * waits for all to arrive, and measures commit (the row's timestamp) → receiver latency.
 */
export const measureLatency = async (
  bench: Bench,
  name: string,
  rate: number,
  seconds: number,
  events: SingleEvents,
): Promise<LatencyResult> => {
  const total = Math.max(1, Math.round(rate * seconds));
  const interval = 1000 / rate;
  const ids: string[] = [];
  const began = performance.now();
  for (let n = 1; n <= total; n += 1) {
    const wait = began + (n - 1) * interval - performance.now();
    if (wait > 0) await sleep(wait);
    ids.push(await events.commitOne(n));
  }
  await bench.receiver.waitFor(total, bench.timeoutMs);
  const committed = await events.commitTimes(ids);
  const latencies = ids.map((id) => {
    const at = committed.get(id);
    const arrived = bench.receiver.arrivals.get(id);
    if (at === undefined || arrived === undefined) throw new Error(`no commit time or arrival for ${id}`);
    return arrived - at;
  });
  return {
    name,
    events: total,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: Math.max(...latencies),
  };
};
