/**
 * The dispatcher's own time: when to claim again, how long to sleep, how long slots were busy.
 * `realTime` in production; the loop's unit tests pass a `TestClock`'s (this package's testing entry).
 */
export interface DispatcherTime {
  /** Milliseconds on a clock that only moves forward. */
  readonly now: () => number;
  /** Runs `run` after `ms`; the returned function cancels it. */
  readonly after: (ms: number, run: () => void) => () => void;
}

/** The process's monotonic clock and timers. */
export const realTime: DispatcherTime = {
  now: () => performance.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    return () => clearTimeout(timer);
  },
};
