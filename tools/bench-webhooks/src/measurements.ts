import { setTimeout as sleep } from "node:timers/promises";
import { openPlatform, type PlatformRuntime, type PlatformSettings } from "@platter/persistence";
import { checkpoint, CostMeter, type DatabaseCost, holdQueue, STATS_IDLE_FLUSH_MS } from "./database-cost.ts";
import { postgresCpuSeconds, processCpuSeconds } from "./process-cpu.ts";
import type { Receiver } from "./receiver.ts";
import { type LatencyResult, percentile, type ThroughputResult } from "./report.ts";
import type { RawSenderProcess, WorkerProcess } from "./worker-processes.ts";

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

/** `after - before`, unless either could not be read. */
const cpuBetween = (before: number | undefined, after: number | undefined): number | undefined =>
  before === undefined || after === undefined ? undefined : after - before;

/** What a run measured around its sending: from the release to the last arrival, and to every result written. */
interface MeasuredSending {
  readonly releasedAt: number;
  readonly settledAt: number;
  readonly workerCpuSeconds: number | undefined;
  readonly postgresCpuSeconds: number | undefined;
  readonly receiverCpu: NodeJS.CpuUsage;
  readonly database: DatabaseCost;
}

/** A drain's result (a raw sender's too): its times from the receiver's arrivals, its costs as measured. */
const throughputOf = (receiver: Receiver, name: string, deliveries: number, measured: MeasuredSending): ThroughputResult => {
  const { first, last } = bounds(receiver.arrivals.values());
  return {
    name,
    deliveries,
    wallSeconds: (last - measured.releasedAt) / 1000,
    drainSeconds: (last - first) / 1000,
    settleSeconds: (measured.settledAt - measured.releasedAt) / 1000,
    workerCpuSeconds: measured.workerCpuSeconds,
    postgresCpuSeconds: measured.postgresCpuSeconds,
    receiverCpuSeconds: (measured.receiverCpu.user + measured.receiverCpu.system) / 1e6,
    database: measured.database,
    duplicates: receiver.duplicates(),
    badSignatures: receiver.badSignatures(),
  };
};

/** Rejects if any worker fails to start; never resolves otherwise. */
const startFailure = (workers: readonly WorkerProcess[]): Promise<never> =>
  Promise.all(workers.map((w) => w.ready)).then(() => new Promise<never>(() => {}));

const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`${what} took over ${ms / 1000} s`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
};

/** The system's queue as the benchmark sees it from outside. */
export interface QueueSpec {
  /** The table every worker reads first; held locked while the workers start. */
  readonly table: string;
  /** One row, column `n`: deliveries not settled yet (pending, or in flight with no result written). */
  readonly unsettledSql: string;
}

/** Where a drain runs. */
export interface DrainTarget {
  /** The measured database. */
  readonly databaseUrl: string;
  /** A superuser's URL on the same server, for CHECKPOINT. */
  readonly adminUrl: string;
  readonly queue: QueueSpec;
}

/**
 * Drains a backlog of `deliveries` just committed in the target's database. Once the statistics of
 * the benchmark's own writes are complete, the server is checkpointed and the tables' row counters
 * and the WAL position read; the workers are then started with the queue table locked, so each
 * blocks at its first look at the queue; once all are waiting, the CPU baseline is taken (the
 * workers, every PostgreSQL process) and the lock released. The run ends when the
 * receiver has seen every delivery and the database shows every result written; CPU is read then,
 * rows and WAL once the workers have stopped and their backends exited (which sends their
 * statistics). So start-up, enqueueing and shutdown are outside every figure.
 */
export const drainBacklog = async (
  bench: Bench,
  name: string,
  deliveries: number,
  target: DrainTarget,
  start: () => Promise<WorkerProcess[]>,
): Promise<ThroughputResult> => {
  const { receiver, postmasterPid } = bench;
  // The backlog was committed just before: let its statistics arrive, and start every drain from a checkpoint.
  await sleep(STATS_IDLE_FLUSH_MS);
  await checkpoint(target.adminUrl);
  const meter = await CostMeter.open(target.databaseUrl);
  try {
    const gate = await holdQueue(target.databaseUrl, target.queue.table);
    let released = false;
    const ownBackends = await meter.backends();
    const rowsBefore = await meter.snapshot();
    const workers = await start();
    try {
      // Kept short: a worker's statements may have a time limit.
      await within(Promise.all(workers.map((w) => w.ready)), 60_000, "worker start-up");
      await within((async () => {
        while ((await meter.waitingBackends()) < workers.length) await sleep(20);
      })(), 60_000, `waiting for ${workers.length} worker(s) to block on ${target.queue.table}`);
      if (receiver.arrivals.size > 0) throw new Error(`${receiver.arrivals.size} deliveries arrived before the queue was released`);
      const workerBefore = sum(workers.map((w) => processCpuSeconds(w.pid)));
      const postgresBefore = postgresCpuSeconds(postmasterPid);
      const receiverBefore = process.cpuUsage();
      const releasedAt = Date.now();
      released = true;
      await gate.release();
      await Promise.race([receiver.waitFor(deliveries, bench.timeoutMs), startFailure(workers)]);
      await meter.waitUntilZero(target.queue.unsettledSql, 60_000);
      const settledAt = Date.now();
      const workerAfter = sum(workers.map((w) => processCpuSeconds(w.pid)));
      const postgresAfter = postgresCpuSeconds(postmasterPid);
      const receiverCpu = process.cpuUsage(receiverBefore);
      await Promise.all(workers.map((w) => w.stop()));
      await meter.waitForOthersToExit(ownBackends, 30_000);
      const database = await meter.between(rowsBefore, await meter.snapshot());
      return throughputOf(receiver, name, deliveries, {
        releasedAt, settledAt, receiverCpu, database,
        workerCpuSeconds: cpuBetween(workerBefore, workerAfter),
        postgresCpuSeconds: cpuBetween(postgresBefore, postgresAfter),
      });
    } finally {
      if (!released) await gate.release().catch(() => {});
      await Promise.all(workers.map((w) => w.stop()));
    }
  } finally {
    await meter.close();
  }
};

/** No database at all: the raw sender's cost. */
const NO_DATABASE: DatabaseCost = { tables: [], reads: [], inserts: 0, updates: 0, hotUpdates: 0, deletes: 0, walBytes: 0 };

/**
 * Sends a backlog of `deliveries` with the raw sender (no queue, no database): once it is ready (its
 * bodies made), the CPU baseline is taken and it is told to go; the run ends when the receiver has
 * seen every delivery and the sender has read every answer. Its figures: the sender's CPU and rate.
 */
export const sendRaw = async (
  bench: Bench,
  name: string,
  deliveries: number,
  start: () => RawSenderProcess,
): Promise<ThroughputResult> => {
  const { receiver } = bench;
  const sender = start();
  try {
    await within(sender.ready, 60_000, "raw sender start-up");
    const before = processCpuSeconds(sender.pid);
    const receiverBefore = process.cpuUsage();
    const releasedAt = Date.now();
    const sent = sender.go();
    await Promise.race([receiver.waitFor(deliveries, bench.timeoutMs), sent]);
    const failed = await sent;
    if (failed > 0) throw new Error(`raw sender: ${failed} of ${deliveries} POSTs failed`);
    const settledAt = Date.now();
    const after = processCpuSeconds(sender.pid);
    const receiverCpu = process.cpuUsage(receiverBefore);
    return throughputOf(receiver, name, deliveries, {
      releasedAt, settledAt, receiverCpu, database: NO_DATABASE,
      workerCpuSeconds: cpuBetween(before, after),
      postgresCpuSeconds: undefined,
    });
  } finally {
    await sender.stop();
  }
};

/**
 * Runs `use` in this process on a platform of its own (`openPlatform`: its own pool), and measures
 * what the database did meanwhile, as a drain does: once the statistics of the writes before are
 * in, the server is checkpointed and the tables' counters and the WAL position read; the platform
 * is then opened, used and closed, and the counters read again once its backends have exited
 * (which sends their statistics). Opening the platform checks the migrations: a few reads of the
 * migrations table, nothing else.
 */
export const measureOnOwnPlatform = async <T>(
  target: Omit<DrainTarget, "queue">,
  settings: PlatformSettings,
  use: (platform: PlatformRuntime) => Promise<T>,
): Promise<{ readonly result: T; readonly cost: DatabaseCost }> => {
  await sleep(STATS_IDLE_FLUSH_MS);
  await checkpoint(target.adminUrl);
  const meter = await CostMeter.open(target.databaseUrl);
  try {
    const kept = await meter.backends();
    const before = await meter.snapshot();
    const platform = await openPlatform(settings);
    let result: T;
    try {
      result = await use(platform);
    } finally {
      await platform.dispose();
    }
    await meter.waitForOthersToExit(kept, 30_000);
    return { result, cost: await meter.between(before, await meter.snapshot()) };
  } finally {
    await meter.close();
  }
};

/** Runs `step` `times` times one after another, each timed on its own (ms); `pause` runs between steps, untimed. */
export const timeEach = async <T>(times: number, step: (n: number) => Promise<T>, pause?: () => Promise<void>) => {
  const ms: number[] = [];
  const results: T[] = [];
  for (let n = 1; n <= times; n += 1) {
    const began = performance.now();
    results.push(await step(n));
    ms.push(performance.now() - began);
    if (pause !== undefined && n < times) await pause();
  }
  return { ms, results };
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
