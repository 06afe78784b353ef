import { sectionMarkers, writeMarkedSection } from "@platter/bench/performance-report";
import {
  historyWrites, type LifecycleResult, type LifecycleRow, OLD_SWEEP_CEILING_PER_SECOND, type PhaseCost, SWEEP_BOUND_PER_SECOND,
} from "./lifecycle.ts";
import { fixedWidth, markdownTable, targetLine, type TargetCheck, targetsTable } from "./report.ts";

/** `lifecycle`'s tables, targets, and its marked section of docs/performance.md (`webhooks-lifecycle`). */

/** What the run says about itself in the section's first line. */
export interface LifecycleReportContext {
  readonly command: string;
  readonly date: string;
  readonly machine: string;
  readonly postgres: string;
}

/** Issue 32's target for the history row writes over a delivery's life (sending and forgetting). */
export const LIFECYCLE_ROW_WRITES_TARGET = 3;
/** Issue 32's target for forgetting: at least 5× the old sweep's ceiling, in messages a second per dispatcher. */
export const FORGET_RATE_TARGET = 5 * OLD_SWEEP_CEILING_PER_SECOND;

type Phase = "send" | "forget";

const micros = (seconds: number | undefined, n: number) => (seconds === undefined ? undefined : (seconds / n) * 1e6);
const cell = (value: number | undefined, digits = 0) => (value === undefined ? "n/a" : value.toFixed(digits));
const add = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : a + b);

/** A phase's (or the whole life's) figures per delivery. */
export interface LifeFigures {
  readonly workerMicros: number | undefined;
  readonly postgresMicros: number | undefined;
  /** Inserts + updates + deletes in the system's history tables, per delivery. */
  readonly historyRowWrites: number;
  readonly hotUpdates: number;
  /** Inserts + updates + deletes in every table of its database, per delivery. */
  readonly allRowWrites: number;
  readonly walBytes: number;
}

const figuresOf = (row: LifecycleRow, phases: readonly Phase[]): LifeFigures => {
  const costs: PhaseCost[] = phases.map((p) => row[p]);
  const n = row.deliveries;
  const sum = (f: (c: PhaseCost) => number) => costs.reduce((total, c) => total + f(c), 0) / n;
  const history = (c: PhaseCost) => historyWrites(c.database, row.historyTables);
  return {
    workerMicros: micros(costs.reduce<number | undefined>((t, c) => add(t, c.workerCpuSeconds), 0), n),
    postgresMicros: micros(costs.reduce<number | undefined>((t, c) => add(t, c.postgresCpuSeconds), 0), n),
    historyRowWrites: sum((c) => { const h = history(c); return h.inserts + h.updates + h.deletes; }),
    hotUpdates: sum((c) => history(c).hotUpdates),
    allRowWrites: sum((c) => c.database.inserts + c.database.updates + c.database.deletes),
    walBytes: sum((c) => c.database.walBytes),
  };
};

/** The whole life's figures per delivery (sending and forgetting summed). */
export const lifeOf = (row: LifecycleRow): LifeFigures => figuresOf(row, ["send", "forget"]);

const LIFE_HEADINGS = [
  "System", "phase", "deliveries", "s", "worker µs", "PostgreSQL µs", "total µs", "history row writes", "of which HOT updates", "all row writes", "WAL bytes",
];
const lifeRows = (result: LifecycleResult): string[][] =>
  result.rows.flatMap((row) => ([["send", ["send"]], ["forget", ["forget"]], ["whole life", ["send", "forget"]]] as const).map(([label, phases]) => {
    const f = figuresOf(row, phases);
    const seconds = phases.reduce((s, p) => s + row[p].seconds, 0);
    return [
      row.system, label, row.deliveries.toLocaleString("en-US"), seconds.toFixed(1), cell(f.workerMicros), cell(f.postgresMicros),
      cell(add(f.workerMicros, f.postgresMicros)), f.historyRowWrites.toFixed(2), f.hotUpdates.toFixed(2), f.allRowWrites.toFixed(2), f.walBytes.toFixed(0),
    ];
  }));

/** Messages a second the retention forgets: as fast as its entry point ran, or the dispatcher's sweep's bound if lower. */
export const dispatcherForgetRate = (result: LifecycleResult): number =>
  Math.min(result.forget.messages / result.forget.cost.seconds, SWEEP_BOUND_PER_SECOND ?? Number.POSITIVE_INFINITY);

const FORGET_HEADINGS = [
  "Backdated messages", "s", "messages/s", "per dispatcher (sweep's bound)", "× old ceiling (833/s)", "process µs/message", "PostgreSQL µs/message", "row writes/message", "WAL bytes/message", "rows left",
];
const forgetRows = (result: LifecycleResult): string[][] => {
  const { messages, cost, historyLeft } = result.forget;
  const rate = messages / cost.seconds;
  return [[
    messages.toLocaleString("en-US"), cost.seconds.toFixed(1), rate.toFixed(0),
    `${dispatcherForgetRate(result).toFixed(0)} (${SWEEP_BOUND_PER_SECOND === undefined ? "none" : `${SWEEP_BOUND_PER_SECOND.toFixed(0)}/s`})`,
    (dispatcherForgetRate(result) / OLD_SWEEP_CEILING_PER_SECOND).toFixed(2),
    cell(micros(cost.workerCpuSeconds, messages)), cell(micros(cost.postgresCpuSeconds, messages)),
    ((cost.database.inserts + cost.database.updates + cost.database.deletes) / messages).toFixed(2), (cost.database.walBytes / messages).toFixed(0),
    String(historyLeft),
  ]];
};

/** Issue 32's targets, judged on this run: Platter's row writes over a life, and its forgetting rate. */
export const lifecycleTargets = (result: LifecycleResult): TargetCheck[] => {
  const platter = result.rows.find((r) => r.historyTables.source.includes("webhook_messages"));
  const rate = dispatcherForgetRate(result);
  return [
    ...(platter === undefined ? [] : [{
      name: "History row writes over a delivery's life (Platter: sending and forgetting)",
      value: lifeOf(platter).historyRowWrites.toFixed(2),
      target: `≤ ${LIFECYCLE_ROW_WRITES_TARGET}`,
      pass: lifeOf(platter).historyRowWrites <= LIFECYCLE_ROW_WRITES_TARGET,
    }]),
    {
      name: "Forgetting a backdated history (messages/s per dispatcher: its rate, or the sweep's bound if lower)",
      value: rate.toFixed(0),
      target: `≥ ${FORGET_RATE_TARGET.toFixed(0)} (5× the old sweep's ${OLD_SWEEP_CEILING_PER_SECOND.toFixed(0)}/s)`,
      pass: rate >= FORGET_RATE_TARGET,
    },
  ];
};

const LIFE_TITLE = "A delivery's life: sent, then forgotten (per delivery; CPU in µs; rows and WAL from the tables' statistics):";
const FORGET_TITLE = "Forgetting a backdated history (each message with a delivery and an attempt) at once:";

/** The terminal's part for `lifecycle`. */
export const lifecycleConsole = (result: LifecycleResult): string =>
  [LIFE_TITLE, fixedWidth([LIFE_HEADINGS, ...lifeRows(result)]), "", FORGET_TITLE, fixedWidth([FORGET_HEADINGS, ...forgetRows(result)]), "",
    ...lifecycleTargets(result).map(targetLine)].join("\n");

/** Writes the `webhooks-lifecycle` marked section of `path` (the rest of the file stays as it is). */
export const writeLifecycleSection = (path: string, context: LifecycleReportContext, result: LifecycleResult): Promise<void> => {
  const { start, end } = sectionMarkers("webhooks-lifecycle");
  return writeMarkedSection(path, "webhooks-lifecycle", [
    start,
    "### A delivery's life: sent and forgotten (`lifecycle`)",
    "",
    `Measured by \`${context.command}\` on ${context.date}. Machine: ${context.machine}. ${context.postgres}.`,
    "",
    LIFE_TITLE,
    "",
    markdownTable([LIFE_HEADINGS, ...lifeRows(result)]),
    "",
    FORGET_TITLE,
    "",
    markdownTable([FORGET_HEADINGS, ...forgetRows(result)]),
    "",
    targetsTable(lifecycleTargets(result)),
    end,
    "",
  ].join("\n"));
};
