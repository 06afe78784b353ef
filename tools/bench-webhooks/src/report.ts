import { readFile, writeFile } from "node:fs/promises";
import type { OperationTimings } from "./store-timings.ts";

/**
 * The webhook benchmark's report: a console table and the `## Webhook delivery` section of
 * docs/performance.md, which it replaces between its own markers and leaves the rest of the file
 * (the API benchmark's part) alone.
 */

/** One backlog drained by one system. */
export interface ThroughputResult {
  readonly name: string;
  readonly deliveries: number;
  /** From spawning the worker process(es) until the receiver had seen every delivery. */
  readonly wallSeconds: number;
  /** From the first delivery received to the last: the steady draining rate, start-up excluded. */
  readonly drainSeconds: number;
  readonly workerCpuSeconds: number | undefined;
  readonly postgresCpuSeconds: number | undefined;
  readonly receiverCpuSeconds: number;
  readonly duplicates: number;
  readonly badSignatures: number;
}

/** Commit → receiver latency of single events at a low, steady rate. */
export interface LatencyResult {
  readonly name: string;
  readonly events: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface TargetCheck {
  readonly name: string;
  readonly value: string;
  readonly target: string;
  readonly pass: boolean;
}

/** The in-process profile: one dispatcher over a timed store. */
export interface StoreProfile {
  readonly deliveries: number;
  readonly seconds: number;
  readonly timings: readonly OperationTimings[];
}

export interface WebhookBenchReport {
  readonly date: string;
  readonly machine: string;
  readonly postgres: string;
  readonly command: string;
  readonly setup: readonly string[];
  readonly throughput: readonly ThroughputResult[];
  readonly latency: readonly LatencyResult[];
  readonly targets: readonly TargetCheck[];
  readonly profile: StoreProfile | undefined;
  readonly findings: readonly string[];
}

/** The value at quantile `q` (0..1) of `values`, nearest rank. */
export const percentile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};

const count = (n: number): string => n.toLocaleString("en-US");
const cpuCell = (cpu: number | undefined, wall: number): string =>
  cpu === undefined ? "n/a" : `${cpu.toFixed(1)} s (${((cpu / wall) * 100).toFixed(0)} %)`;

const THROUGHPUT_HEADINGS = [
  "Scenario", "deliveries", "start → all s", "deliveries/s", "drain/s", "worker CPU", "postgres CPU", "receiver CPU", "dupes", "bad sig",
];
const throughputRows = (results: readonly ThroughputResult[]): string[][] =>
  results.map((r) => [
    r.name,
    count(r.deliveries),
    r.wallSeconds.toFixed(1),
    (r.deliveries / r.wallSeconds).toFixed(0),
    ((r.deliveries - 1) / r.drainSeconds).toFixed(0),
    cpuCell(r.workerCpuSeconds, r.wallSeconds),
    cpuCell(r.postgresCpuSeconds, r.wallSeconds),
    cpuCell(r.receiverCpuSeconds, r.wallSeconds),
    String(r.duplicates),
    String(r.badSignatures),
  ]);

const LATENCY_HEADINGS = ["Scenario", "events", "p50 ms", "p99 ms", "max ms"];
const latencyRows = (results: readonly LatencyResult[]): string[][] =>
  results.map((r) => [r.name, count(r.events), r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.maxMs.toFixed(1)]);

const PROFILE_HEADINGS = ["Store call", "calls", "total s", "share of run", "p50 ms", "p99 ms", "max ms", "rows/call", "asked/call"];
const profileRows = (profile: StoreProfile): string[][] =>
  profile.timings.map((t) => [
    t.operation, count(t.calls), (t.totalMs / 1000).toFixed(1), `${((t.totalMs / 1000 / profile.seconds) * 100).toFixed(0)} %`,
    t.p50Ms.toFixed(1), t.p99Ms.toFixed(1), t.maxMs.toFixed(1), t.meanRows.toFixed(1), t.meanAsked.toFixed(1),
  ]);
const profileTitle = (profile: StoreProfile): string =>
  `In-process profile: ${count(profile.deliveries)} deliveries in ${profile.seconds.toFixed(1)} s ` +
  `(${(profile.deliveries / profile.seconds).toFixed(0)}/s; receiver in the same process)`;

const fixedWidth = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
};

const markdownTable = (rows: string[][]): string =>
  [rows[0]!, rows[0]!.map((_, i) => (i === 0 ? "---" : "---:")), ...rows.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n");

/** Throughput, latency and target tables for the terminal. */
export const consoleReport = (report: WebhookBenchReport): string =>
  [
    fixedWidth([THROUGHPUT_HEADINGS, ...throughputRows(report.throughput)]),
    "",
    fixedWidth([LATENCY_HEADINGS, ...latencyRows(report.latency)]),
    "",
    ...(report.profile === undefined
      ? []
      : [profileTitle(report.profile), fixedWidth([PROFILE_HEADINGS, ...profileRows(report.profile)]), ""]),
    ...report.targets.map((t) => `${t.pass ? "PASS" : "FAIL"}  ${t.name}: ${t.value} (target ${t.target})`),
  ].join("\n");

const START = "<!-- webhooks:start -->";
const END = "<!-- webhooks:end -->";

/** The section, markers included. */
export const markdownSection = (report: WebhookBenchReport): string => `${START}
## Webhook delivery

Measured by \`${report.command}\` (tools/bench-webhooks) on ${report.date}.

Machine: ${report.machine}. ${report.postgres}. The machine is small, shared and noisy, and the
worker, PostgreSQL and the receiver all compete for its two cores: absolute figures move between
runs, so compare the systems with each other (they are measured minutes apart on the same box).

### How it is measured

${report.setup.map((line) => `- ${line}`).join("\n")}

### Backlog throughput

${markdownTable([THROUGHPUT_HEADINGS, ...throughputRows(report.throughput)])}

CPU columns are seconds of CPU used during the run (and that as a share of its wall time; 100 % is
one core): the worker process(es), every PostgreSQL process, the receiver (the benchmark process).

### Low-load latency (commit → receiver)

${markdownTable([LATENCY_HEADINGS, ...latencyRows(report.latency)])}

### Targets

| Target | Value | Target | Result |
| --- | ---: | --- | --- |
${report.targets.map((t) => `| ${t.name} | ${t.value} | ${t.target} | ${t.pass ? "pass" : "FAIL"} |`).join("\n")}
${report.profile === undefined ? "" : `
### Where a dispatcher's time goes

${profileTitle(report.profile)}: the dispatcher loop run in the benchmark process over a store that
times every call. Calls overlap (the pool has several connections), so shares can add up past 100 %.

${markdownTable([PROFILE_HEADINGS, ...profileRows(report.profile)])}
`}${report.findings.length > 0 ? `\n### Findings\n\n${report.findings.map((f) => `- ${f}`).join("\n")}\n` : ""}${END}
`;

/** Replaces this benchmark's section of `path` (or appends it; creates the file if missing), leaving the rest as it is. */
export const writeSection = async (path: string, report: WebhookBenchReport): Promise<void> => {
  const section = markdownSection(report);
  const current = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });
  if (current === undefined) return writeFile(path, `# Performance\n\n${section}`);
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start !== -1 && end > start) {
    const after = current.slice(end + END.length).replace(/^\n/, "");
    return writeFile(path, `${current.slice(0, start)}${section}${after}`);
  }
  return writeFile(path, `${current.replace(/\n*$/, "\n\n")}${section}`);
};
