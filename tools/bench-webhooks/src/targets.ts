import type { LatencyResult, StoreProfile, TargetCheck, ThroughputResult } from "./report.ts";

/** The targets of the webhook benchmark, judged, and what the measurements say about where time goes. */

const find = (results: readonly ThroughputResult[], prefix: string) => results.find((r) => r.name.startsWith(prefix));
const perSecond = (r: ThroughputResult | undefined) => (r === undefined ? undefined : r.deliveries / r.wallSeconds);

/** ≥ 1,000 deliveries/s from one dispatcher, p50 ≤ 50 ms at low load, ahead of pg-boss on both, nothing delivered wrongly. */
export const targetsOf = (throughput: readonly ThroughputResult[], latency: readonly LatencyResult[]): TargetCheck[] => {
  const one = perSecond(find(throughput, "Platter dispatcher ×1"));
  const two = perSecond(find(throughput, "Platter dispatcher ×2"));
  const bossRates = throughput.filter((r) => r.name.startsWith("pg-boss")).map((r) => r.deliveries / r.wallSeconds);
  const boss = bossRates.length === 0 ? undefined : Math.max(...bossRates);
  const p50 = latency.find((r) => r.name.startsWith("Platter"))?.p50Ms;
  const bossP50 = latency.find((r) => r.name.startsWith("pg-boss"))?.p50Ms;
  const checks: TargetCheck[] = [];
  if (one !== undefined) checks.push({ name: "one dispatcher, deliveries/s", value: one.toFixed(0), target: "≥ 1,000", pass: one >= 1000 });
  if (p50 !== undefined) {
    checks.push({ name: "dispatcher p50 commit → receiver at low load", value: `${p50.toFixed(1)} ms`, target: "≤ 50 ms", pass: p50 <= 50 });
  }
  if (one !== undefined && boss !== undefined) {
    checks.push({ name: "one dispatcher / fastest pg-boss, deliveries/s", value: (one / boss).toFixed(2), target: "> 1", pass: one > boss });
  }
  if (p50 !== undefined && bossP50 !== undefined) {
    checks.push({ name: "dispatcher p50 / pg-boss p50, low load", value: (p50 / bossP50).toFixed(2), target: "< 1", pass: p50 < bossP50 });
  }
  if (one !== undefined && two !== undefined) {
    checks.push({ name: "two dispatchers / one, deliveries/s (informational)", value: (two / one).toFixed(2), target: "report", pass: true });
  }
  const wrong = throughput.reduce((n, r) => n + r.duplicates + r.badSignatures, 0);
  checks.push({ name: "duplicate deliveries + bad signatures, all runs", value: String(wrong), target: "0", pass: wrong === 0 });
  return checks;
};

const cpuShare = (cpu: number | undefined, r: ThroughputResult) => (cpu === undefined ? "n/a" : `${((cpu / r.wallSeconds) * 100).toFixed(0)} %`);

/** Observations computed from this run's figures, for the report. */
export const findingsOf = (throughput: readonly ThroughputResult[], profile: StoreProfile | undefined): string[] => {
  const findings: string[] = [];
  const one = find(throughput, "Platter dispatcher ×1");
  const boss = throughput.filter((r) => r.name.startsWith("pg-boss")).sort((a, b) => a.wallSeconds - b.wallSeconds)[0];
  if (one !== undefined && one.workerCpuSeconds !== undefined && one.postgresCpuSeconds !== undefined) {
    const cores = (one.workerCpuSeconds + one.postgresCpuSeconds + one.receiverCpuSeconds) / one.wallSeconds;
    findings.push(`One dispatcher used ${cpuShare(one.workerCpuSeconds, one)} of a core, PostgreSQL ${cpuShare(one.postgresCpuSeconds, one)}, ` +
      `the receiver ${cpuShare(one.receiverCpuSeconds, one)}: ${cores.toFixed(1)} of the 2 cores together` +
      (cores < 1.2 ? ", so the drain is bound by the loop's round trips more than by CPU (see the profile)." : "."));
  }
  if (one !== undefined && boss !== undefined && one.postgresCpuSeconds !== undefined && boss.postgresCpuSeconds !== undefined) {
    const perDelivery = (r: ThroughputResult) => ((r.postgresCpuSeconds! / r.deliveries) * 1e6).toFixed(0);
    findings.push(`PostgreSQL CPU per delivery: ${perDelivery(one)} µs for the dispatcher, ${perDelivery(boss)} µs for pg-boss. ` +
      "Per delivery the dispatcher writes a delivery row, marks the outbox row, leases, inserts an attempt row and settles " +
      "the delivery (5 row writes, the outbox and attempt history included); pg-boss updates its job row twice (fetch, complete).");
  }
  const two = find(throughput, "Platter dispatcher ×2");
  if (two !== undefined && two.workerCpuSeconds !== undefined && two.postgresCpuSeconds !== undefined) {
    const cores = (two.workerCpuSeconds + two.postgresCpuSeconds + two.receiverCpuSeconds) / two.wallSeconds;
    findings.push(`Two dispatchers: PostgreSQL ${cpuShare(two.postgresCpuSeconds, two)} of a core, both workers ` +
      `${cpuShare(two.workerCpuSeconds, two)}, the receiver ${cpuShare(two.receiverCpuSeconds, two)}: ${cores.toFixed(1)} of the 2 cores` +
      (cores >= 1.7 ? ", so the machine's CPU, not the dispatchers, was the limit." : "."));
  }
  const timing = (name: string) => profile?.timings.find((t) => t.operation === name);
  const claim = timing("claimDue");
  const emptyFanOut = timing("fanOut (none)");
  const write = timing("recordAttempts");
  if (profile !== undefined && claim !== undefined) {
    findings.push(`Profile: the loop is sequential (fan out, then claim, then POST), ${claim.calls.toLocaleString("en-US")} claims of ` +
      `${claim.meanRows.toFixed(0)} deliveries on average, p50 ${claim.p50Ms.toFixed(1)} ms each` +
      (emptyFanOut === undefined ? "" : `, each tick preceded by a fan-out that found nothing (p50 ${emptyFanOut.p50Ms.toFixed(1)} ms, ` +
        `${emptyFanOut.calls.toLocaleString("en-US")} times)`) +
      ". POSTs to a local receiver take about a millisecond, so the slots sit idle while the loop talks to PostgreSQL, " +
      "and a claim never takes more than the free slots (≤ DISPATCHER_CONCURRENCY), where pg-boss fetches batchSize jobs per subscription.");
  }
  if (write !== undefined) {
    findings.push(`Attempt results are written one batch at a time: ${write.calls.toLocaleString("en-US")} batches of ` +
      `${write.meanRows.toFixed(0)} on average, p50 ${write.p50Ms.toFixed(1)} ms (three statements in one transaction).`);
  }
  return findings;
};
