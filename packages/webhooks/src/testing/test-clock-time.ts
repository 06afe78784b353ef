import { Clock, Effect, Fiber, ManagedRuntime } from "effect";
import { TestClock } from "effect/testing";
import type { DispatcherTime } from "../dispatcher-time.ts";

/** A `TestClock` for the dispatcher loop: its time and timers, moved only by `adjust`. */
export interface TestClockTime {
  readonly time: DispatcherTime;
  /** Moves the clock by `ms`, runs every timer due by then, and lets what they started settle. */
  readonly adjust: (ms: number) => Promise<void>;
  /** Lets promises and storage calls started by the loop run to their next wait on the clock. */
  readonly settle: () => Promise<void>;
  readonly dispose: () => Promise<void>;
}

/** A new `TestClockTime` at time 0. */
export const testClockTime = (): TestClockTime => {
  const runtime = ManagedRuntime.make(TestClock.layer());
  // Turns of the event loop: each lets the loop's awaits (storage calls run as Effects) go one step further.
  const settle = async () => {
    for (let turn = 0; turn < 25; turn++) await new Promise((done) => setImmediate(done));
  };
  return {
    time: {
      now: () => runtime.runSync(Clock.currentTimeMillis),
      after: (ms, run) => {
        const fiber = runtime.runFork(Effect.andThen(Effect.sleep(Math.max(0, ms)), Effect.sync(run)));
        return () => void runtime.runFork(Fiber.interrupt(fiber));
      },
    },
    adjust: async (ms) => {
      await settle();
      await runtime.runPromise(TestClock.adjust(ms));
      await settle();
    },
    settle,
    dispose: () => runtime.dispose(),
  };
};
