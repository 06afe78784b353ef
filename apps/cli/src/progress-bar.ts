import cliProgress from "cli-progress";
import { note } from "./output.ts";

/** Progress of a long command on stderr: a bar per stage on a terminal, a line per stage otherwise. */
export interface Progress {
  readonly update: (label: string, done: number, total: number) => void;
  readonly stop: () => void;
}

const bar = (): Progress => {
  const bar = new cliProgress.SingleBar(
    { format: "{label} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}", stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let current: string | undefined;
  return {
    update: (label, done, total) => {
      if (label !== current) {
        if (current !== undefined) bar.stop();
        current = label;
        bar.start(total, done, { label: label.padEnd(9) });
      } else {
        bar.update(done);
      }
    },
    stop: () => {
      if (current !== undefined) bar.stop();
      current = undefined;
    },
  };
};

const stageLines = (): Progress => {
  let current: string | undefined;
  return {
    update: (label, _done, total) => {
      if (label !== current) note(`seeding ${total} ${label}…`);
      current = label;
    },
    stop: () => {},
  };
};

const silent: Progress = { update: () => {}, stop: () => {} };

/** The progress display for this run: none with `--json`, a bar only when stderr is a terminal. */
export const progressFor = (json: boolean): Progress => {
  if (json) return silent;
  return process.stderr.isTTY ? bar() : stageLines();
};
