import { sectionMarkers, writeMarkedSection } from "@platter/bench/performance-report";
import type { LifecycleReportContext } from "./lifecycle-report.ts";
import { fixedWidth, markdownTable, targetLine, targetsTable } from "./report.ts";
import { SOAK_HEADINGS, soakIntervalRow, type SoakResult } from "./soak.ts";

/** The soak's tables and targets, and its marked section of docs/performance.md (`webhooks-soak`), written only by runs of 30 minutes or more. */

/** The shortest soak whose figures are written into docs/performance.md; shorter runs only print. */
export const SOAK_REPORTED_MS = 30 * 60_000;

const totals = (r: SoakResult): string =>
  `${r.creates.toLocaleString("en-US")} creates and ${r.reads.toLocaleString("en-US")} reads; ${r.errors5xx} 5xx, ` +
  `${r.failedRequests} without an answer; healthy endpoint: ${r.lost} lost, ${r.duplicates} duplicates, ${r.badSignatures} bad signatures.`;

const title = (r: SoakResult) =>
  `${r.settings.rate} creates/s for ${r.settings.durationMs >= 60_000 ? `${(r.settings.durationMs / 60_000).toFixed(0)} min` : `${r.settings.durationMs / 1000} s`}, retention ${r.settings.retentionMs / 1000} s ` +
  `(swept every ${r.settings.sweepMs / 1000} s); per interval:`;

/** The terminal's part for the soak. */
export const soakConsole = (r: SoakResult): string =>
  [title(r), fixedWidth([SOAK_HEADINGS, ...r.intervals.map(soakIntervalRow)]), "", totals(r), "", ...r.targets.map(targetLine)].join("\n");

/** Writes the `webhooks-soak` marked section of `path` (the rest of the file stays as it is). */
export const writeSoakSection = (path: string, context: LifecycleReportContext, r: SoakResult): Promise<void> => {
  const { start, end } = sectionMarkers("webhooks-soak");
  return writeMarkedSection(path, "webhooks-soak", [
    start,
    "### Hours of ordinary traffic (`BENCH_WEBHOOK_SOAK`)",
    "",
    `Measured by \`${context.command}\` on ${context.date}. Machine: ${context.machine}. ${context.postgres}.`,
    "",
    title(r),
    "",
    markdownTable([SOAK_HEADINGS, ...r.intervals.map(soakIntervalRow)]),
    "",
    totals(r),
    "",
    targetsTable(r.targets),
    end,
    "",
  ].join("\n"));
};
