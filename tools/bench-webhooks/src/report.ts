import { sectionMarkers, writeMarkedSection } from "@platter/bench/performance-report";
import type { DatabaseCost } from "./database-cost.ts";
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
  /** From releasing the started, waiting worker(s) until the receiver had seen every delivery. */
  readonly wallSeconds: number;
  /** From the first delivery received to the last: the steady draining rate. */
  readonly drainSeconds: number;
  /** From the release until every result was written (the CPU window). */
  readonly settleSeconds: number;
  /** CPU of the worker process(es) over the CPU window. */
  readonly workerCpuSeconds: number | undefined;
  /** CPU of every PostgreSQL process over the CPU window. */
  readonly postgresCpuSeconds: number | undefined;
  readonly receiverCpuSeconds: number;
  /** Rows written and WAL generated, from the release until the worker(s) had stopped. */
  readonly database: DatabaseCost;
  /** Attempt rows the system kept for this drain (its inspectable history), when it keeps any. */
  readonly attemptsRecorded?: number;
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

/** CPU microseconds per delivery, or undefined where the CPU could not be read. */
export const microsPerDelivery = (cpuSeconds: number | undefined, r: ThroughputResult): number | undefined =>
  cpuSeconds === undefined ? undefined : (cpuSeconds / r.deliveries) * 1e6;
/** Worker and PostgreSQL CPU together, per delivery. */
export const totalMicros = (r: ThroughputResult): number | undefined =>
  r.workerCpuSeconds === undefined || r.postgresCpuSeconds === undefined
    ? undefined
    : microsPerDelivery(r.workerCpuSeconds + r.postgresCpuSeconds, r);
/** Rows inserted, updated and deleted, per delivery. */
export const rowWritesPerDelivery = (r: ThroughputResult): number =>
  (r.database.inserts + r.database.updates + r.database.deletes) / r.deliveries;

const micros = (value: number | undefined) => (value === undefined ? "n/a" : value.toFixed(0));
/** Per delivery, two decimals; a few rows over a whole drain show as "<0.01" rather than a misleading 0.00. */
export const perDelivery = (n: number, r: ThroughputResult): string =>
  n > 0 && n / r.deliveries < 0.005 ? "<0.01" : (n / r.deliveries).toFixed(2);

const HEADLINE_HEADINGS = [
  "Scenario", "deliveries", "worker µs", "PostgreSQL µs", "total µs", "row writes", "ins / upd / del", "WAL bytes", "attempt rows",
];
const headlineRows = (results: readonly ThroughputResult[]): string[][] =>
  results.map((r) => [
    r.name,
    count(r.deliveries),
    micros(microsPerDelivery(r.workerCpuSeconds, r)),
    micros(microsPerDelivery(r.postgresCpuSeconds, r)),
    micros(totalMicros(r)),
    rowWritesPerDelivery(r).toFixed(2),
    `${perDelivery(r.database.inserts, r)} / ${perDelivery(r.database.updates, r)} / ${perDelivery(r.database.deletes, r)}`,
    (r.database.walBytes / r.deliveries).toFixed(0),
    r.attemptsRecorded === undefined ? "none kept" : perDelivery(r.attemptsRecorded, r),
  ]);

const TABLE_HEADINGS = ["Scenario", "table", "inserts", "updates", "of which HOT", "deletes"];
const tableRows = (results: readonly ThroughputResult[]): string[][] =>
  results.flatMap((r) =>
    r.database.tables.map((t) => [
      r.name, t.table, perDelivery(t.inserts, r), perDelivery(t.updates, r), perDelivery(t.hotUpdates, r), perDelivery(t.deletes, r),
    ]));

const THROUGHPUT_HEADINGS = [
  "Scenario", "deliveries", "release → all s", "deliveries/s", "drain/s", "worker CPU", "postgres CPU", "receiver CPU", "dupes", "bad sig",
];
const throughputRows = (results: readonly ThroughputResult[]): string[][] =>
  results.map((r) => [
    r.name,
    count(r.deliveries),
    r.wallSeconds.toFixed(1),
    (r.deliveries / r.wallSeconds).toFixed(0),
    ((r.deliveries - 1) / r.drainSeconds).toFixed(0),
    cpuCell(r.workerCpuSeconds, r.settleSeconds),
    cpuCell(r.postgresCpuSeconds, r.settleSeconds),
    cpuCell(r.receiverCpuSeconds, r.settleSeconds),
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

const HEADLINE_TITLE = "Per delivery (CPU in µs over the drain; rows and WAL from the tables' statistics):";

/** Headline, throughput, latency and target tables for the terminal. */
export const consoleReport = (report: WebhookBenchReport): string =>
  [
    report.postgres,
    "",
    HEADLINE_TITLE,
    fixedWidth([HEADLINE_HEADINGS, ...headlineRows(report.throughput)]),
    "",
    "Rows written per delivery, by table:",
    fixedWidth([TABLE_HEADINGS, ...tableRows(report.throughput)]),
    "",
    "Deliveries/s at equal concurrency:",
    fixedWidth([THROUGHPUT_HEADINGS, ...throughputRows(report.throughput)]),
    "",
    ...(report.latency.length === 0 ? [] : ["Low-load latency (commit → receiver):", fixedWidth([LATENCY_HEADINGS, ...latencyRows(report.latency)]), ""]),
    ...(report.profile === undefined
      ? []
      : [profileTitle(report.profile), fixedWidth([PROFILE_HEADINGS, ...profileRows(report.profile)]), ""]),
    ...report.targets.map((t) => `${t.pass ? "PASS" : "FAIL"}  ${t.name}: ${t.value} (target ${t.target})`),
  ].join("\n");

const { start: START, end: END } = sectionMarkers("webhooks");

/** The section, markers included. */
export const markdownSection = (report: WebhookBenchReport): string => `${START}
## Webhook delivery

Measured by \`${report.command}\` (tools/bench-webhooks) on ${report.date}.

Machine: ${report.machine}. ${report.postgres}. The machine is small, shared and noisy, and the
worker, PostgreSQL and the receiver all compete for its two cores: absolute figures move between
runs, so compare the systems with each other (they are measured minutes apart on the same box, in
the same run), and prefer CPU per delivery to deliveries per second.

### How it is measured

${report.setup.map((line) => `- ${line}`).join("\n")}

### CPU per delivery (the headline)

${markdownTable([HEADLINE_HEADINGS, ...headlineRows(report.throughput)])}

Per delivery, over the drain of the same backlog by each system in this one run: CPU microseconds
of the worker process(es) and of every PostgreSQL process (the server's own background processes
included), their total, rows written (inserts + updates + deletes in the benchmark's database, from
\`pg_stat_user_tables\`), WAL bytes generated, and the attempt rows kept as delivery history.

Rows written per delivery, by table:

${markdownTable([TABLE_HEADINGS, ...tableRows(report.throughput)])}

### Deliveries per second at equal concurrency

${markdownTable([THROUGHPUT_HEADINGS, ...throughputRows(report.throughput)])}

"release → all" runs from releasing the started, waiting worker(s) to the receiver's last arrival;
"drain/s" from the first arrival to the last. CPU columns are seconds of CPU from the release until
every result was written (and that as a share of that time; 100 % is one core): the worker
process(es), every PostgreSQL process, the receiver (the benchmark process).

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
export const writeSection = (path: string, report: WebhookBenchReport): Promise<void> =>
  writeMarkedSection(path, "webhooks", markdownSection(report));
