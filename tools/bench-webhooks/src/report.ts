import { readFile, writeFile } from "node:fs/promises";
import { otherRates, type ThrottleResult, throttledRate } from "./endpoint-throttle.ts";
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

/** `tenants`: another organization's latency while one organization's many slow endpoints work a backlog. */
export interface TenantsResult {
  readonly latency: LatencyResult;
  /** The slow organization's endpoints, each on an origin of its own. */
  readonly endpoints: number;
  readonly queued: number;
  readonly holdMs: number;
  /** The slow organization's attempts in flight (live leases) at the end of the measurement. */
  readonly slowInFlight: number;
}

/** `origin`: another organization's latency beside a busy origin, and that origin's deliveries/s against its ideal. */
export interface BusyOriginResult {
  readonly latency: LatencyResult;
  /** Endpoints on the busy origin, and the organizations they belong to. */
  readonly endpoints: number;
  readonly organizations: number;
  readonly queued: number;
  readonly holdMs: number;
  /** WEBHOOK_ORIGIN_CONNECTIONS given to the dispatcher. */
  readonly originConnections: number;
  /** Requests the busy origin answered during the latency measurement, and how long it lasted. */
  readonly busyAnswered: number;
  readonly busySeconds: number;
  /** min(concurrency, origin connections, endpoints × endpoint cap) / hold. */
  readonly idealPerSecond: number;
  /** The busy origin's deliveries still pending at the end (0: the backlog ran out, the rate is a floor). */
  readonly busyPendingAtEnd: number;
}

/** `origins`: one drain over endpoints on distinct origins, by `dispatchers` processes. */
export interface OriginsRun {
  readonly dispatchers: number;
  readonly endpoints: number;
  readonly holdMs: number;
  /** min(concurrency × dispatchers, endpoints × endpoint cap) / hold. */
  readonly idealPerSecond: number;
  /**
   * Deliveries/s while the drain is steady: arrivals from one hold after the first to two holds
   * before the last (the first wave's start and the last, partly filled waves left out).
   */
  readonly steadyPerSecond: number;
  /** Over the same window: the share of the dispatchers' slots in use (attempts in flight), from their slot-seconds counters. */
  readonly slotShare: number;
  /** Over the same window: an attempt's mean duration, send to answer, from the dispatchers' histograms. */
  readonly meanAttemptMs: number;
  readonly throughput: ThroughputResult;
}

/** `many-endpoints`: repeated claims over one organization's endpoints, each with deliveries pending. */
export interface ClaimCost {
  readonly endpoints: number;
  readonly pending: number;
  /** The claim size asked for (`limit`). */
  readonly asked: number;
  /** Milliseconds of each claim, and the deliveries each returned. */
  readonly ms: readonly number[];
  readonly claimed: readonly number[];
  readonly cost: DatabaseCost;
}

/** `fan-out`: creates (the API's storage call) for an organization with `endpoints` endpoints. */
export interface FanOutCost {
  readonly endpoints: number;
  readonly ms: readonly number[];
  readonly cost: DatabaseCost;
}

/** The tenant-isolation scenarios, each present when it ran. */
export interface IsolationResults {
  readonly tenants?: TenantsResult;
  readonly origin?: BusyOriginResult;
  readonly origins?: readonly OriginsRun[];
  readonly manyEndpoints?: readonly ClaimCost[];
  readonly fanOut?: readonly FanOutCost[];
  readonly throttle?: ThrottleResult;
}

/** The scenario names of `IsolationResults`, as BENCH_WEBHOOK_SCENARIOS spells them, in report order. */
export const ISOLATION_SCENARIOS = [
  { key: "tenants", name: "tenants" },
  { key: "origin", name: "origin" },
  { key: "origins", name: "origins" },
  { key: "manyEndpoints", name: "many-endpoints" },
  { key: "fanOut", name: "fan-out" },
  { key: "throttle", name: "throttle" },
] as const satisfies ReadonlyArray<{ key: keyof IsolationResults; name: string }>;

/** One isolation scenario's targets. */
export type IsolationTargets = { readonly [K in keyof IsolationResults]?: readonly TargetCheck[] };

export interface WebhookBenchReport {
  readonly date: string;
  readonly machine: string;
  readonly postgres: string;
  /** The command that produced the figures, with the BENCH_* variables it ran with. */
  readonly command: string;
  /** Whether any of the first scenarios (dispatcher, dispatchers, pg-boss, fairness, profile) ran: only then is their part rewritten. */
  readonly ranMain: boolean;
  readonly setup: readonly string[];
  readonly throughput: readonly ThroughputResult[];
  readonly latency: readonly LatencyResult[];
  readonly targets: readonly TargetCheck[];
  readonly profile: StoreProfile | undefined;
  readonly findings: readonly string[];
  readonly isolation: IsolationResults;
  readonly isolationSetup: { readonly [K in keyof IsolationResults]?: string };
  readonly isolationTargets: IsolationTargets;
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

/** Rows (headings first) as a fixed-width table for the terminal. */
export const fixedWidth = (rows: string[][]): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
};

/** Rows (headings first) as a Markdown table. */
export const markdownTable = (rows: string[][]): string =>
  [rows[0]!, rows[0]!.map((_, i) => (i === 0 ? "---" : "---:")), ...rows.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n");

/** One isolation scenario as shown: its tables (caption, rows with headings first) and notes. */
interface IsolationPart {
  readonly heading: string;
  readonly tables: ReadonlyArray<{ readonly caption: string; readonly rows: string[][] }>;
  readonly notes: readonly string[];
}

const ms = (values: readonly number[], q: number): string => percentile(values, q).toFixed(1);
const mean = (values: readonly number[]): number => values.reduce((a, v) => a + v, 0) / Math.max(1, values.length);
const ratioOf = (value: number, ideal: number): string => (value / ideal).toFixed(2);

/** The webhook tables' reads (opening a pool also reads the migrations table, which is no claim's cost). */
const webhookReads = (cost: DatabaseCost) => cost.reads.filter((t) => t.table.startsWith("public.webhook_"));
/** Pages of the webhook tables and their indexes asked of the buffer cache, per claim. */
export const pagesPerClaim = (c: ClaimCost): number => webhookReads(c.cost).reduce((n, t) => n + t.pages, 0) / c.ms.length;
/** Rows a claim read per claim in the webhook tables: index entries returned plus rows read by sequential scans. */
export const rowsReadPerClaim = (c: ClaimCost): number =>
  webhookReads(c.cost).reduce((n, t) => n + t.indexEntries + t.seqRows, 0) / c.ms.length;
/** Median milliseconds of a claim. */
export const claimMedianMs = (c: ClaimCost): number => percentile(c.ms, 0.5);
/** Rows inserted, updated and deleted per create. */
export const rowWritesPerCreate = (f: FanOutCost): number => (f.cost.inserts + f.cost.updates + f.cost.deletes) / f.ms.length;
/** Deliveries per second of a drain: from the release to the receiver's last arrival. */
export const deliveriesPerSecond = (r: ThroughputResult): number => r.deliveries / r.wallSeconds;

const BUSY_HEADINGS = ["Busy origin", "endpoints (organizations)", "queued", "answered in window", "window s", "deliveries/s", "ideal/s", "of ideal", "pending at end"];
const ORIGINS_HEADINGS = [
  "Dispatchers", "deliveries", "release → all s", "deliveries/s", "steady/s", "ideal/s", "steady of ideal", "slots in use", "attempt ms", "worker µs", "PostgreSQL µs", "worker CPU",
  "postgres CPU", "receiver CPU", "dupes", "bad sig",
];
const CLAIM_HEADINGS = [
  "Endpoints with work", "pending", "claims × asked", "claimed (mean)", "p50 ms", "p95 ms", "rows read/claim", "pages/claim",
  "rows updated/claim (HOT)", "WAL bytes/claim",
];
const CLAIM_TABLE_HEADINGS = ["Endpoints with work", "table", "index entries", "seq rows", "rows fetched", "pages"];
const FAN_OUT_HEADINGS = ["Endpoints", "creates", "p50 ms", "p95 ms", "row writes/create", "deliveries/create", "WAL bytes/create"];

const perClaim = (n: number, c: ClaimCost): string => (n / c.ms.length).toFixed(1);
const tableWrites = (cost: DatabaseCost, table: string) => cost.tables.find((t) => t.table === table);

const isolationParts: { readonly [K in keyof IsolationResults]-?: (r: NonNullable<IsolationResults[K]>) => IsolationPart } = {
  tenants: (r) => ({
    heading: "One organization with many slow endpoints",
    tables: [{ caption: "The other organization's commit → receiver latency:", rows: [LATENCY_HEADINGS, ...latencyRows([r.latency])] }],
    notes: [`The slow organization held ${count(r.slowInFlight)} attempts in flight at the end of the measurement ` +
      `(its ${r.endpoints} endpoints could take ${count(r.endpoints * 16)} at their caps).`],
  }),
  origin: (r) => ({
    heading: "A busy shared origin",
    tables: [
      { caption: "The other organization's commit → receiver latency (its endpoint on an origin of its own):", rows: [LATENCY_HEADINGS, ...latencyRows([r.latency])] },
      {
        caption: "The busy origin while the latency was measured:",
        rows: [BUSY_HEADINGS, [
          `one origin (${r.holdMs} ms per request)`, `${r.endpoints} (${r.organizations})`, count(r.queued), count(r.busyAnswered),
          r.busySeconds.toFixed(1), (r.busyAnswered / r.busySeconds).toFixed(0), r.idealPerSecond.toFixed(0),
          ratioOf(r.busyAnswered / r.busySeconds, r.idealPerSecond), count(r.busyPendingAtEnd),
        ]],
      },
    ],
    notes: r.busyPendingAtEnd === 0 ? ["The busy origin's backlog ran out during the window: its deliveries/s is a floor."] : [],
  }),
  origins: (runs) => ({
    heading: "Distinct origins scale",
    tables: [{
      caption: "Deliveries/s against the ideal, and CPU per delivery:",
      rows: [ORIGINS_HEADINGS, ...runs.map(({ dispatchers, idealPerSecond, steadyPerSecond, slotShare, meanAttemptMs, throughput: r }) => [
        `×${dispatchers}`, count(r.deliveries), r.wallSeconds.toFixed(1), deliveriesPerSecond(r).toFixed(0), steadyPerSecond.toFixed(0),
        idealPerSecond.toFixed(0), ratioOf(steadyPerSecond, idealPerSecond), slotShare.toFixed(2), meanAttemptMs.toFixed(0), micros(microsPerDelivery(r.workerCpuSeconds, r)),
        micros(microsPerDelivery(r.postgresCpuSeconds, r)), cpuCell(r.workerCpuSeconds, r.settleSeconds),
        cpuCell(r.postgresCpuSeconds, r.settleSeconds), cpuCell(r.receiverCpuSeconds, r.settleSeconds), String(r.duplicates),
        String(r.badSignatures),
      ])],
    }],
    notes: [],
  }),
  manyEndpoints: (claims) => ({
    heading: "Claims cost what they deliver",
    tables: [
      {
        caption: "Per claim (`DeliveryQueue.claimDue`, one organization):",
        rows: [CLAIM_HEADINGS, ...claims.map((c) => {
          const deliveries = tableWrites(c.cost, "public.webhook_deliveries");
          return [
            count(c.endpoints), count(c.pending), `${c.ms.length} × ${c.asked}`, mean(c.claimed).toFixed(1), ms(c.ms, 0.5), ms(c.ms, 0.95),
            rowsReadPerClaim(c).toFixed(0), pagesPerClaim(c).toFixed(0),
            `${perClaim(deliveries?.updates ?? 0, c)} (${perClaim(deliveries?.hotUpdates ?? 0, c)})`, (c.cost.walBytes / c.ms.length).toFixed(0),
          ];
        })],
      },
      {
        caption: "Read per claim, by table:",
        rows: [CLAIM_TABLE_HEADINGS, ...claims.flatMap((c) => webhookReads(c.cost).map((t) => [
          count(c.endpoints), t.table, perClaim(t.indexEntries, c), perClaim(t.seqRows, c), perClaim(t.fetchedRows, c), perClaim(t.pages, c),
        ]))],
      },
    ],
    notes: [],
  }),
  fanOut: (creates) => ({
    heading: "Fan-out at the endpoint limit",
    tables: [{
      caption: "Per create (`Clients.create`, the API's write: the client, its message and one delivery per endpoint):",
      rows: [FAN_OUT_HEADINGS, ...creates.map((f) => [
        count(f.endpoints), count(f.ms.length), ms(f.ms, 0.5), ms(f.ms, 0.95), rowWritesPerCreate(f).toFixed(2),
        ((tableWrites(f.cost, "public.webhook_deliveries")?.inserts ?? 0) / f.ms.length).toFixed(2), (f.cost.walBytes / f.ms.length).toFixed(0),
      ])],
    }],
    notes: [],
  }),
  throttle: (r) => ({
    heading: "An endpoint its organization throttled",
    tables: [{
      caption: `The throttled endpoint's receiver, and the organization's other endpoint (${count(r.queued)} queued at each, ${r.dispatchers} dispatchers):`,
      rows: [
        ["Endpoint", "throttle/s", "deliveries counted", "over s", "deliveries/s"],
        ["throttled", String(r.perSecond), count(r.windowArrivals), r.windowSeconds.toFixed(1), throttledRate(r).toFixed(2)],
        ["other, beside it", "none", count(r.otherDeliveries), r.otherSeconds.toFixed(1), otherRates(r).beside.toFixed(1)],
        ["other, alone (baseline)", "none", count(r.otherDeliveries), r.aloneSeconds.toFixed(1), otherRates(r).alone.toFixed(1)],
      ],
    }],
    notes: [`While the other endpoint received its ${count(r.otherDeliveries)}, the throttled one received ${count(r.throttledMeanwhile)}; ` +
      `${r.duplicates} duplicate deliveries and ${r.badSignatures} bad signatures in all.`],
  }),
};

/** The parts of the isolation scenarios that ran, with their names and targets. */
const isolationRan = (report: WebhookBenchReport) =>
  ISOLATION_SCENARIOS.flatMap(({ key, name }) => {
    const result = report.isolation[key];
    if (result === undefined) return [];
    const part = (isolationParts[key] as (r: typeof result) => IsolationPart)(result);
    return [{ key, name, part, targets: report.isolationTargets[key] ?? [] }];
  });

/** A target as a terminal line: PASS or FAIL, the value, the target. */
export const targetLine = (t: TargetCheck) => `${t.pass ? "PASS" : "FAIL"}  ${t.name}: ${t.value} (target ${t.target})`;
/** Targets as a Markdown table. */
export const targetsTable = (targets: readonly TargetCheck[]): string =>
  ["| Target | Value | Target | Result |", "| --- | ---: | --- | --- |",
    ...targets.map((t) => `| ${t.name} | ${t.value} | ${t.target} | ${t.pass ? "pass" : "FAIL"} |`)].join("\n");

const HEADLINE_TITLE = "Per delivery (CPU in µs over the drain; rows and WAL from the tables' statistics):";

/** Headline, throughput, latency and target tables for the terminal (the first scenarios' only when one of them ran). */
export const consoleReport = (report: WebhookBenchReport): string =>
  [
    report.postgres,
    "",
    ...(!report.ranMain ? [] : [
      HEADLINE_TITLE,
      fixedWidth([HEADLINE_HEADINGS, ...headlineRows(report.throughput)]),
      "",
      "Rows written per delivery, by table:",
      fixedWidth([TABLE_HEADINGS, ...tableRows(report.throughput)]),
      "",
      "Deliveries/s at equal concurrency:",
      fixedWidth([THROUGHPUT_HEADINGS, ...throughputRows(report.throughput)]),
      "",
    ]),
    ...(report.latency.length === 0 ? [] : ["Low-load latency (commit → receiver):", fixedWidth([LATENCY_HEADINGS, ...latencyRows(report.latency)]), ""]),
    ...(report.profile === undefined
      ? []
      : [profileTitle(report.profile), fixedWidth([PROFILE_HEADINGS, ...profileRows(report.profile)]), ""]),
    ...isolationRan(report).flatMap(({ name, part }) => [
      `${part.heading} (${name}):`,
      ...part.tables.flatMap((t) => [t.caption, fixedWidth(t.rows)]),
      ...part.notes,
      "",
    ]),
    ...(report.ranMain ? report.targets.map(targetLine) : []),
    ...isolationRan(report).flatMap(({ targets }) => targets.map(targetLine)),
  ].join("\n");

const { start: START, end: END } = sectionMarkers("webhooks");

/** The section, markers included, with the isolation part (`isolationSection`) at its end. */
export const markdownSection = (report: WebhookBenchReport, isolation: string): string => `${START}
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
`}${report.findings.length > 0 ? `\n### Findings\n\n${report.findings.map((f) => `- ${f}`).join("\n")}\n` : ""}${isolation === "" ? "" : `\n${isolation}`}${END}
`;

const ISOLATION = sectionMarkers("webhooks-isolation");
const scenarioMarkers = (name: string) => sectionMarkers(`webhooks-${name}`);

/** The text of marked section `markers` in `text`, markers included, if there is one. */
const markedText = (text: string, markers: { readonly start: string; readonly end: string }): string | undefined => {
  const from = text.indexOf(markers.start);
  const to = text.indexOf(markers.end, from);
  return from === -1 || to === -1 ? undefined : text.slice(from, to + markers.end.length);
};

/** One isolation scenario's part of the report, markers included: its command, setup, tables, notes and targets. */
const isolationBlock = (report: WebhookBenchReport, name: string, part: IsolationPart, targets: readonly TargetCheck[], setup: string): string => {
  const { start, end } = scenarioMarkers(name);
  return [
    start,
    `#### ${part.heading} (\`${name}\`)`,
    "",
    `Measured by \`${report.command}\` on ${report.date}. Machine: ${report.machine}. ${report.postgres}.`,
    "",
    setup,
    "",
    ...part.tables.flatMap((t) => [t.caption, "", markdownTable(t.rows), ""]),
    ...(part.notes.length === 0 ? [] : [...part.notes.map((n) => `- ${n}`), ""]),
    ...(targets.length === 0 ? [] : [targetsTable(targets), ""]),
    end,
  ].join("\n");
};

/**
 * The isolation part of the section, markers included (empty when no isolation scenario ever ran):
 * the scenarios of this run, and for the others the part an earlier run wrote in `current`.
 */
const isolationSection = (report: WebhookBenchReport, current: string): string => {
  const ran = new Map(isolationRan(report).map((r) => [r.name, r]));
  const blocks = ISOLATION_SCENARIOS.flatMap(({ key, name }) => {
    const fresh = ran.get(name);
    if (fresh !== undefined) return [isolationBlock(report, name, fresh.part, fresh.targets, report.isolationSetup[key] ?? "")];
    const kept = markedText(current, scenarioMarkers(name));
    return kept === undefined ? [] : [kept];
  });
  if (blocks.length === 0) return "";
  return `${ISOLATION.start}
### Tenant isolation

What one organization's endpoints can cost another organization (issue 16). Each scenario says the
command and the date of its figures, and keeps them until it runs again: a run of other scenarios
(\`BENCH_WEBHOOK_SCENARIOS\`) leaves them as they are.

${blocks.join("\n\n")}
${ISOLATION.end}
`;
};

const readIfThere = (path: string): Promise<string> =>
  readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });

/**
 * Writes this run's figures into this benchmark's section of `path` (appends the section, or
 * creates the file, if missing), leaving the rest of the file as it is. The first scenarios'
 * part is rewritten only when one of them ran; each isolation scenario's part only when it ran.
 */
export const writeSection = async (path: string, report: WebhookBenchReport): Promise<void> => {
  const current = await readIfThere(path);
  const isolation = isolationSection(report, current);
  if (report.ranMain) return writeMarkedSection(path, "webhooks", markdownSection(report, isolation));
  if (isolation === "") return;
  if (markedText(current, ISOLATION) !== undefined) return writeMarkedSection(path, "webhooks-isolation", isolation);
  if (markedText(current, { start: START, end: END }) !== undefined) return writeFile(path, current.replace(END, `\n${isolation}${END}`));
  return writeMarkedSection(path, "webhooks", `${START}\n## Webhook delivery\n\n${isolation}${END}\n`);
};
