import { sectionMarkers, writeMarkedSection } from "@platter/bench/performance-report";

/**
 * The benchmark's report: a console table and the `## Developer area` section of
 * docs/performance.md, between its own markers (`<!-- developer-area:start -->` … `:end -->`), so
 * `npm run bench`, which rewrites the file, keeps it, and this benchmark leaves the rest alone.
 */

/** One page's figures over its measured requests. */
export interface PageResult {
  readonly name: string;
  readonly path: string;
  readonly requests: number;
  readonly status: number;
  readonly bytes: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Server process CPU per request (user + system), median. */
  readonly cpuUs: number;
  /** Scans of the log's tables during the measured requests. */
  readonly scans: ReadonlyArray<ScanCounts>;
}

/** Sequential scans and index scans of the log's tables during the measured requests (pg_stat_user_tables). */
export interface ScanCounts {
  readonly table: string;
  readonly seqScans: number;
  readonly indexScans: number;
}

export interface DeveloperAreaBenchReport {
  readonly command: string;
  readonly date: string;
  readonly machine: string;
  readonly postgres: string;
  readonly deliveries: number;
  readonly otherDeliveries: number;
  readonly endpoints: number;
  readonly requestsPerPage: number;
  readonly warmup: number;
  readonly targetMs: number;
  readonly results: ReadonlyArray<PageResult>;
}

const HEADINGS = ["Page", "Path", "status", "KiB", "p50 ms", "p99 ms", "max ms", "CPU µs (p50)", "p99 < target", "seq scans / req"];

/** Sequential scans per request of the deliveries, messages and attempts tables. */
const seqScans = (result: PageResult) => {
  const found = result.scans.filter((scan) => scan.seqScans > 0);
  return found.length === 0 ? "0" : found.map((scan) => `${(scan.seqScans / result.requests).toFixed(1)} ${scan.table}`).join(", ");
};

const rowsOf = (report: DeveloperAreaBenchReport): string[][] =>
  report.results.map((r) => [
    r.name, r.path.length > 60 ? `${r.path.slice(0, 57)}…` : r.path, String(r.status), (r.bytes / 1024).toFixed(1), r.p50Ms.toFixed(2),
    r.p99Ms.toFixed(2), r.maxMs.toFixed(2), r.cpuUs.toFixed(0), r.p99Ms < report.targetMs ? "pass" : "FAIL", seqScans(r),
  ]);

/** A fixed-width table for the terminal. */
export const consoleTable = (report: DeveloperAreaBenchReport): string => {
  const rows = [HEADINGS, ...rowsOf(report)];
  const widths = HEADINGS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  return [line(rows[0]!), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
};

const table = (rows: string[][], numericFrom: number) =>
  [rows[0]!, rows[0]!.map((_, i) => (i < numericFrom ? "---" : "---:")), ...rows.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n");

const { start: START, end: END } = sectionMarkers("developer-area");
const count = (n: number) => n.toLocaleString("en-US");

/** The section, markers included. */
export const markdownSection = (report: DeveloperAreaBenchReport): string => {
  const slowest = [...report.results].sort((x, y) => y.p99Ms - x.p99Ms)[0]!;
  const pass = report.results.every((r) => r.p99Ms < report.targetMs);
  return `${START}
## Developer area

Measured by \`${report.command}\` (tools/bench-developer-area) on ${report.date}.

Machine: ${report.machine}. ${report.postgres}. Small, shared and noisy: absolute figures move
between runs.

### How it is measured

- A fresh migrated database; organization A gets ${count(report.deliveries)} deliveries over the last week to
  ${report.endpoints} endpoints, each with its attempts (\`Seeding.deliveryLog\`: about 2 % failed after three attempts
  with a 500 and an HTML body, 0.5 % pending), and organization B another ${count(report.otherDeliveries)} of its own;
  both get the demo data set and an API key; then \`vacuum (analyze)\`.
- The Developer area (\`createDeveloperAreaApp\`, silent logger) listens on 127.0.0.1 in the benchmark's
  process; the benchmark signs in with a link as A and requests each page ${report.requestsPerPage} times, one request at a
  time (after ${report.warmup} unmeasured ones), over HTTP with the session's cookie.
- **Server time** is measured around the area's own request handler: from the request's arrival to
  the last byte of the response handed to the socket (\`finish\`), so it includes every database
  round trip of the page (session, organization, the page's reads) but not the client. **CPU** is the
  process's user + system CPU over the same interval (the client is idle then: requests are sequential).
- The log's pages: the first page, each filter (status, event type, endpoint, a one-day window),
  a deep page (the cursor of the 5,000th delivery, as the "Older" link would carry it), and a message
  with its deliveries to every endpoint and their attempts.

### Results

${table([HEADINGS, ...rowsOf(report)], 2)}

Target: every page under ${report.targetMs} ms server time at p99 — **${pass ? "met" : "NOT met"}** (slowest p99: ${slowest.name},
${slowest.p99Ms.toFixed(2)} ms).

"seq scans / req": sequential scans of \`webhook_deliveries\`, \`webhook_messages\` and
\`webhook_attempts\` per measured request, from \`pg_stat_user_tables\` read before a page's measured requests and
11 s after them (backends report their statistics once idle); 0 means every read of those tables was
an index scan. (\`webhook_endpoints\`, a few rows in one page, is read by sequential scan, as PostgreSQL prefers there.)
${END}
`;
};

/** Replaces this benchmark's section of `path` (or appends it; creates the file if missing), leaving the rest as it is. */
export const writeSection = (path: string, report: DeveloperAreaBenchReport): Promise<void> =>
  writeMarkedSection(path, "developer-area", markdownSection(report));
