import autocannon, { type AutocannonRequest } from "autocannon";
import type { CpuMeter } from "./cpu-meter.ts";

/**
 * Load: bounded autocannon runs against 127.0.0.1. Latencies are recorded from every response at
 * full resolution (autocannon's own histogram keeps whole milliseconds, too coarse for ratios of
 * few-millisecond pages).
 *
 * Targets that are compared with each other are measured interleaved: every round gives each of
 * them a short slice in turn, so a noisy neighbour or a slow drift of the shared machine hits
 * them alike instead of whichever happened to run at the wrong time. Each round's figures are
 * kept, so a ratio can be taken round by round (seconds apart) and summarised by its median.
 */

/** The median of per-round ratios `a[r] / b[r]`: robust to a few rounds hit by a noisy neighbour. */
export const medianRatio = (a: readonly number[], b: readonly number[]): number => {
  const ratios = a.map((value, r) => value / b[r]!).sort((x, y) => x - y);
  const middle = Math.floor(ratios.length / 2);
  return ratios.length % 2 === 1 ? ratios[middle]! : (ratios[middle - 1]! + ratios[middle]!) / 2;
};

export interface LoadTarget {
  readonly name: string;
  readonly baseUrl: string;
  readonly requests: readonly AutocannonRequest[];
  /** CPU of the server answering this target and of PostgreSQL. */
  readonly meter?: CpuMeter;
}

export interface LoadSettings {
  readonly connections: number;
  /** Measured seconds per target, summed over all rounds. */
  readonly durationS: number;
  /** Unmeasured seconds per target before the first round. */
  readonly warmupS: number;
  readonly rounds: number;
}

/** One round's slice of a target. */
export interface RoundResult {
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  /** CPU microseconds per completed request in this round's slice (NaN when the meter could not read them). */
  readonly serverCpuUs: number;
  readonly postgresCpuUs: number;
}

export interface LoadResult {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  readonly completed: number;
  /** Connection errors, timeouts included. */
  readonly errors: number;
  readonly non2xx: number;
  /** CPU microseconds per completed request, when the meter could read them. */
  readonly serverCpuUs: number | undefined;
  readonly postgresCpuUs: number | undefined;
  readonly rounds: readonly RoundResult[];
}

interface Tally {
  readonly latencies: number[];
  seconds: number;
  errors: number;
  non2xx: number;
  serverCpu: number | undefined;
  postgresCpu: number | undefined;
  readonly rounds: RoundResult[];
}

const addDelta = (sum: number | undefined, before: number | undefined, after: number | undefined) =>
  sum === undefined || before === undefined || after === undefined ? undefined : sum + (after - before);

const percentile = (sorted: readonly number[], fraction: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;

const fire = async (target: LoadTarget, connections: number, durationS: number, tally?: Tally): Promise<void> => {
  const instance = autocannon({ url: target.baseUrl, connections, duration: durationS, timeout: 10, requests: target.requests });
  const latencies: number[] = [];
  instance.on("response", (_client, _status, _bytes, ms) => void latencies.push(ms));
  const before = tally && target.meter?.();
  const result = await instance;
  if (tally) {
    const after = target.meter?.();
    tally.serverCpu = addDelta(tally.serverCpu, before?.server, after?.server);
    tally.postgresCpu = addDelta(tally.postgresCpu, before?.postgres, after?.postgres);
    tally.seconds += result.duration;
    for (const ms of latencies) tally.latencies.push(ms);
    const perRequest = (b: number | undefined, a: number | undefined) =>
      b === undefined || a === undefined ? Number.NaN : ((a - b) * 1e6) / Math.max(latencies.length, 1);
    tally.rounds.push({
      requestsPerSecond: latencies.length / result.duration,
      p50Ms: percentile(latencies.sort((a, b) => a - b), 0.5),
      serverCpuUs: perRequest(before?.server, after?.server),
      postgresCpuUs: perRequest(before?.postgres, after?.postgres),
    });
    tally.errors += result.errors;
    tally.non2xx += result.non2xx;
  }
};

const summary = (name: string, tally: Tally): LoadResult => {
  const sorted = tally.latencies.sort((a, b) => a - b);
  return {
    name,
    requestsPerSecond: sorted.length / tally.seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    meanMs: sorted.reduce((sum, ms) => sum + ms, 0) / Math.max(sorted.length, 1),
    completed: sorted.length,
    errors: tally.errors,
    non2xx: tally.non2xx,
    serverCpuUs: tally.serverCpu === undefined ? undefined : (tally.serverCpu * 1e6) / Math.max(sorted.length, 1),
    postgresCpuUs: tally.postgresCpu === undefined ? undefined : (tally.postgresCpu * 1e6) / Math.max(sorted.length, 1),
    rounds: tally.rounds,
  };
};

/**
 * Warms every target up, then measures them round-robin, each round starting one target further
 * on: every target takes every position in the round (equally often when the rounds are a multiple
 * of the targets), so none is always the one that runs first, right after the previous round's
 * last. With a fixed order a figure moved by as much as 0.05 of a ratio between otherwise equal
 * runs. Neighbours stay neighbours (side by side in all rounds but the one a target opens), so
 * round-by-round ratios still compare slices seconds apart. Results in the order of `targets`.
 */
export const measureInterleaved = async (
  targets: readonly LoadTarget[],
  settings: LoadSettings,
  onRound?: (round: number) => void,
): Promise<LoadResult[]> => {
  if (settings.warmupS > 0) for (const target of targets) await fire(target, settings.connections, settings.warmupS);
  const tallies = targets.map((): Tally => ({ latencies: [], seconds: 0, errors: 0, non2xx: 0, serverCpu: 0, postgresCpu: 0, rounds: [] }));
  const slice = settings.durationS / settings.rounds;
  for (let round = 1; round <= settings.rounds; round++) {
    onRound?.(round);
    for (let k = 0; k < targets.length; k++) {
      const i = (round - 1 + k) % targets.length;
      await fire(targets[i]!, settings.connections, slice, tallies[i]);
    }
  }
  return targets.map((target, i) => summary(target.name, tallies[i]!));
};
