import { afterEach, describe, expect, it } from "vitest";
import { IDLE_FLOOR_MS, type OutboxChannel, OutboxRunner } from "../src/index.ts";
import { testClockTime, type TestClockTime } from "../src/testing/index.ts";

/**
 * The outbox runner on a `TestClock`, over an outbox the test holds as a list of due items: wake-ups
 * coalesce into turns, a turn with work is followed by another at once, an idle runner sleeps until
 * its channel's next item is due or its poll comes round, and outcomes the database could not take
 * (an outage) are written again within the lease without sending anything twice.
 */

/** What a dropped connection fails with while the database is away. */
class DatabaseAway extends Error {}

/** An outbox of numbered items, `batch` claimed a turn; every call is counted. */
const listOutbox = (batch: number) => {
  const due: number[] = [];
  const calls = { prepare: 0, claim: 0, sent: [] as number[], recorded: [] as number[], recordFailures: 0 };
  let failRecords = 0;
  let nextDueInMs: number | undefined;
  const channel: OutboxChannel<number, number> = {
    prepare: async () => void calls.prepare++,
    claim: async () => {
      calls.claim++;
      return due.splice(0, batch);
    },
    send: async (items) => {
      calls.sent.push(...items);
      return items;
    },
    record: async (sent) => {
      if (failRecords > 0) {
        failRecords--;
        calls.recordFailures++;
        throw new DatabaseAway("connection terminated");
      }
      calls.recorded.push(...sent);
    },
    nextDueInMs: async () => nextDueInMs,
  };
  return {
    channel, due, calls,
    failNextRecords: (count: number) => (failRecords = count),
    dueIn: (ms: number | undefined) => (nextDueInMs = ms),
  };
};

let clock: TestClockTime;
let running: Array<OutboxRunner<number, number>> = [];

/** A runner on `channel` and a new test clock, started, with its first (empty) turn taken. */
const start = async (channel: OutboxChannel<number, number>) => {
  clock = testClockTime();
  const runner = new OutboxRunner(channel, {
    pollIntervalMs: 30_000, leaseMs: 60_000, gatherMs: 50, time: clock.time, isOutage: (error) => error instanceof DatabaseAway,
  });
  runner.start();
  running.push(runner);
  await clock.settle();
  return runner;
};

afterEach(async () => {
  await Promise.all(running.map((runner) => runner.stop()));
  running = [];
  await clock?.dispose();
});

describe("the outbox runner", () => {
  it("makes one turn of a hundred wake-ups that come at once, and one per gather time of wake-ups that keep coming", async () => {
    const outbox = listOutbox(20);
    const runner = await start(outbox.channel);
    expect(runner.turns).toBe(1);

    for (let i = 0; i < 100; i++) runner.wake();
    await clock.adjust(50);
    expect(runner.turns).toBe(2);

    // A wake-up every 10 ms for 200 ms: a turn at most every 50 ms, not one each.
    for (let i = 0; i < 20; i++) {
      runner.wake();
      await clock.adjust(10);
    }
    await clock.adjust(50);
    expect(runner.turns - 2).toBeGreaterThanOrEqual(1);
    expect(runner.turns - 2).toBeLessThanOrEqual(200 / 50 + 1);
  });

  it("turns again at once while a turn claimed work, then sleeps until woken", async () => {
    const outbox = listOutbox(20);
    const runner = await start(outbox.channel);
    outbox.due.push(...Array.from({ length: 45 }, (_, i) => i + 1));
    runner.wake();
    await clock.adjust(50);
    // Three turns with work (20, 20, 5) and one that found nothing, after the first empty one.
    expect(runner.turns).toBe(5);
    expect(outbox.calls.sent).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(outbox.calls.recorded).toEqual(outbox.calls.sent);
    await clock.adjust(10_000);
    expect(runner.turns).toBe(5);
  });

  // Each row: what the channel says is due after each turn (the runner asks at the end of every turn that found
  // nothing), and so how long the runner sleeps before the next turn, to the millisecond.
  it.each([
    {
      sleeps: "until its channel's next item is due, then its fallback poll once nothing is",
      nextDue: [2_000, 2_000, undefined],
      asleepMs: [2_000, 2_000, 30_000],
    },
    {
      sleeps: "the floor when an item is due but its claim passes it over (its organization at its share): it does not spin",
      nextDue: [0, 0, 0, 0],
      asleepMs: [IDLE_FLOOR_MS, IDLE_FLOOR_MS, IDLE_FLOOR_MS, IDLE_FLOOR_MS],
    },
  ])("sleeps $sleeps", async ({ nextDue, asleepMs }) => {
    const outbox = listOutbox(20);
    outbox.dueIn(nextDue[0]);
    const runner = await start(outbox.channel);
    // One turn at start, then one after each sleep: not a turn per event-loop tick.
    for (const [slept, ms] of asleepMs.entries()) {
      outbox.dueIn(nextDue[slept + 1]);
      await clock.adjust(ms - 1);
      expect(runner.turns).toBe(slept + 1);
      await clock.adjust(1);
      expect(runner.turns).toBe(slept + 2);
    }
    expect(outbox.calls.claim).toBe(asleepMs.length + 1);
  });

  it("writes outcomes the database could not take again every second within the lease, sending nothing twice", async () => {
    const outbox = listOutbox(20);
    const runner = await start(outbox.channel);
    outbox.due.push(1, 2, 3);
    outbox.failNextRecords(2);
    runner.wake();
    await clock.adjust(50);
    expect(outbox.calls.recordFailures).toBe(1);
    expect(outbox.calls.recorded).toEqual([]);
    await clock.adjust(1_000);
    await clock.adjust(1_000);
    expect(outbox.calls.recordFailures).toBe(2);
    expect(outbox.calls.recorded).toEqual([1, 2, 3]);
    expect(outbox.calls.sent).toEqual([1, 2, 3]);
    expect(runner.turns).toBe(3);
  });

  it("keeps a wake-up that comes during a turn which found nothing: the item committed meanwhile goes in the next turn, not after the poll", async () => {
    const outbox = listOutbox(20);
    let release: (() => void) | undefined;
    const held = new Promise<void>((done) => (release = done));
    let holdNextClaim = false;
    const channel: OutboxChannel<number, number> = {
      ...outbox.channel,
      claim: async () => {
        if (holdNextClaim) {
          holdNextClaim = false;
          await held;
          return [];
        }
        return outbox.channel.claim();
      },
    };
    const runner = await start(channel);
    holdNextClaim = true;
    runner.wake();
    await clock.adjust(50);
    expect(runner.turns).toBe(2);
    // Committed (and NOTIFYd) while that turn's claim was on its way, after it had looked.
    outbox.due.push(7);
    runner.wake();
    release!();
    await clock.adjust(50);
    expect(outbox.calls.sent).toEqual([7]);
    expect(runner.turns).toBe(4);
  });
});
