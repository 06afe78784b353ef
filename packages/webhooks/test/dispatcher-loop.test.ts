import type { AttemptResult, DeliveryStorage, DueDelivery } from "@platter/domain";
import { DISABLED_GONE, outcomeOf, SETTLED_ENDPOINT_DISABLED } from "@platter/domain";
import { Effect } from "effect";
import { afterEach, describe, expect, it } from "vitest";
import { type ClaimState, claimTiming, type ClaimTiming, type DispatcherSettings, WebhookDispatcher } from "../src/index.ts";
import { InMemoryDeliveryStorage, testClockTime, type TestClockTime } from "../src/testing/index.ts";

/**
 * The dispatcher loop on the in-memory queue and a `TestClock`: retries on the schedule, the
 * circuit (open, one half-open probe, closed), a lease that runs out while its holder hangs, and
 * shutdown with attempts in flight. Minutes of delivery take milliseconds; no socket is opened
 * (each attempt is a receiver the test scripts, answering after a delay of the test's clock).
 */

const SETTINGS: DispatcherSettings = {
  signatureHeader: "x-platter-signature",
  timeoutMs: 15_000,
  allowPrivateNetworks: true,
  concurrency: 8,
  endpointConcurrency: 8,
  circuitThreshold: 3,
  circuitCooldownMs: 30_000,
  retryScheduleMs: [0, 5_000, 60_000],
  failureWindowMs: 5 * 24 * 3600_000,
  leaseMs: 45_000,
  pollIntervalMs: 1_000,
};

/** A receiver the test scripts: each call is noted with the clock's time, answered after `latencyMs` with `status(call)`. */
const receiver = (clock: TestClockTime, latencyMs: number, status: (delivery: DueDelivery, call: number) => number) => {
  const calls: Array<{ readonly at: number; readonly deliveryId: number; readonly attempt: number }> = [];
  const attempt = (delivery: DueDelivery) =>
    new Promise<AttemptResult>((done) => {
      const at = clock.time.now();
      const statusCode = status(delivery, calls.length);
      calls.push({ at, deliveryId: delivery.id, attempt: delivery.attempt });
      clock.time.after(latencyMs, () =>
        done({ startedAt: new Date(at), durationMs: latencyMs, statusCode, error: undefined, responseBody: "", outcome: outcomeOf(statusCode) }));
    });
  return { calls, attempt };
};

/** What a dropped or timed-out connection fails with while the database is away (the loop's storage dies with it, as the driver does). */
class DatabaseAway extends Error {}

let clock: TestClockTime;
let running: WebhookDispatcher[] = [];

/** A dispatcher on `storage` and the test's clock, started. */
const start = (storage: DeliveryStorage, attempt: (delivery: DueDelivery) => Promise<AttemptResult>, settings = SETTINGS) => {
  const dispatcher = new WebhookDispatcher(storage, settings, {}, { time: clock.time, attempt });
  dispatcher.start();
  running.push(dispatcher);
  return dispatcher;
};

/** A new clock, and a queue on it with one endpoint at `url` and `count` deliveries to it, due now. */
const oneEndpointQueue = (url: string, count: number) => {
  clock = testClockTime();
  const storage = new InMemoryDeliveryStorage(clock.time.now);
  storage.addEndpoint(1, 1, url);
  return { storage, deliveries: Array.from({ length: count }, () => storage.addDelivery(1)) };
};

/** Moves the clock forward by `ms` in steps of `step`, letting the loop act at each. */
const advance = async (ms: number, step = 50) => {
  for (let passed = 0; passed < ms; passed += step) await clock.adjust(Math.min(step, ms - passed));
};

describe("the dispatcher loop", () => {
  afterEach(async () => {
    const stopping = Promise.all(running.map((dispatcher) => dispatcher.stop()));
    running = [];
    await advance(2_000);
    await stopping;
    await clock.dispose();
  });

  it("retries a failing delivery on the schedule's delays, counted from each failed try's result", async () => {
    const { storage, deliveries: [delivery] } = oneEndpointQueue("https://hooks.example/a", 1);
    const hook = receiver(clock, 100, (_delivery, call) => (call < 2 ? 500 : 200));
    start(storage, hook.attempt);

    await advance(4_000);
    expect(hook.calls.map((call) => call.attempt)).toEqual([1]);
    await advance(62_000);
    expect(hook.calls.map((call) => call.attempt)).toEqual([1, 2, 3]);
    const [first, second] = storage.attempts;
    // Each retry waits its delay from when the failed try's result was written, give or take one claim's wait.
    expect(hook.calls[1]!.at - first!.recordedAtMs).toBeGreaterThanOrEqual(5_000);
    expect(hook.calls[1]!.at - first!.recordedAtMs).toBeLessThan(5_100);
    expect(hook.calls[2]!.at - second!.recordedAtMs).toBeGreaterThanOrEqual(60_000);
    expect(hook.calls[2]!.at - second!.recordedAtMs).toBeLessThan(60_100);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 3 });
  });

  it("fails a delivery for good once the schedule is exhausted", async () => {
    const { storage, deliveries: [delivery] } = oneEndpointQueue("https://hooks.example/a", 1);
    const hook = receiver(clock, 10, () => 503);
    start(storage, hook.attempt, { ...SETTINGS, circuitThreshold: 100 });
    await advance(70_000, 100);
    expect(hook.calls).toHaveLength(3);
    expect(delivery).toMatchObject({ status: "failed", attempts: 3, completedAtMs: expect.any(Number) });
  });

  it("disables an endpoint that answers 410 and ends its other pending deliveries, as the domain's decision says", async () => {
    const { storage, deliveries } = oneEndpointQueue("https://hooks.example/gone", 6);
    const hook = receiver(clock, 10, () => 410);
    start(storage, hook.attempt, { ...SETTINGS, endpointConcurrency: 1 });
    await advance(2_000);
    expect(storage.healthOf(1)).toMatchObject({ enabled: false, disabledReason: DISABLED_GONE, noticed: "disabled" });
    // Those sent (a slot frees as a result is handed to the writer, so one more may go before the 410 is written) failed for good;
    // the others ended because their endpoint is disabled.
    const sent = new Set(hook.calls.map((call) => call.deliveryId));
    expect(sent.size).toBeLessThan(deliveries.length);
    expect(deliveries.filter((delivery) => sent.has(delivery.id))).toEqual([...sent].map(() => expect.objectContaining({
      status: "failed", attempts: 1, settledReason: undefined, leaseToken: undefined,
    })));
    expect(deliveries.filter((delivery) => !sent.has(delivery.id))).toEqual(Array.from({ length: deliveries.length - sent.size }, () => expect.objectContaining({
      status: "failed", attempts: 0, completedAtMs: expect.any(Number), settledReason: SETTLED_ENDPOINT_DISABLED, leaseToken: undefined,
    })));
  });

  it("opens the circuit after failures in a row, sends one half-open probe per cooldown, and closes it on a success", async () => {
    const { storage } = oneEndpointQueue("https://hooks.example/flaky", 5);
    let healthy = false;
    const hook = receiver(clock, 100, () => (healthy ? 200 : 500));
    start(storage, hook.attempt, { ...SETTINGS, retryScheduleMs: [0, 1_000, 1_000, 1_000, 1_000] });

    await advance(1_000);
    expect(hook.calls).toHaveLength(5);
    expect(storage.healthOf(1)).toMatchObject({ consecutiveFailures: 5, circuitOpenUntilMs: expect.any(Number) });
    // Retries are due after a second, but the circuit holds them for its cooldown, without spending their tries.
    await advance(28_000, 100);
    expect(hook.calls).toHaveLength(5);
    await advance(2_000);
    expect(hook.calls).toHaveLength(6);
    // The probe failed: open again for the cooldown, one probe at its end.
    await advance(29_000, 100);
    expect(hook.calls).toHaveLength(6);
    healthy = true;
    await advance(2_000);
    // The probe succeeded: closed, and the rest go at once.
    expect(hook.calls).toHaveLength(11);
    expect(storage.healthOf(1)).toMatchObject({ consecutiveFailures: 0, circuitOpenUntilMs: undefined, enabled: true });
    const probes = hook.calls.slice(5, 7).map((call) => call.at - hook.calls[0]!.at);
    expect(probes[0]).toBeGreaterThanOrEqual(30_000);
    expect(probes[1]! - probes[0]!).toBeGreaterThanOrEqual(30_000);
    expect(storage.deliveries.every((delivery) => delivery.status === "succeeded")).toBe(true);
  });

  it("lets another dispatcher take a delivery whose lease ran out while its holder hung, and ignores the holder's late result", async () => {
    const { storage, deliveries: [delivery] } = oneEndpointQueue("https://hooks.example/a", 1);
    const settings = { ...SETTINGS, leaseMs: 2_000 };
    const hung = receiver(clock, 10_000, () => 500);
    start(storage, hung.attempt, settings);
    await advance(500);
    expect(hung.calls).toHaveLength(1);
    const healthy = receiver(clock, 50, () => 200);
    start(storage, healthy.attempt, settings);
    await advance(1_000);
    expect(healthy.calls).toHaveLength(0);
    await advance(2_000);
    expect(healthy.calls).toHaveLength(1);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 1 });
    await advance(8_000);
    // The hung try's failure is logged, but moved nothing: the delivery stays delivered.
    expect(storage.attempts.map(({ outcome, heldLease }) => ({ outcome, heldLease }))).toEqual([
      { outcome: "succeeded", heldLease: true },
      { outcome: "failed", heldLease: false },
    ]);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 1 });
  });

  it.each([
    ["shorter than the lease: the results kept meanwhile are written once it is back, nothing is sent twice", 5_000, 1],
    ["longer than the lease: the results are given up with it, and their deliveries sent again after it", 12_000, 2],
  ])("rides out a database outage %s", async (_case, outageMs, sends) => {
    const { storage, deliveries } = oneEndpointQueue("https://hooks.example/outage", 3);
    const settings = { ...SETTINGS, leaseMs: 10_000 };
    // Every call fails as a dropped connection does while the database is away.
    let away = false;
    const whileAway = <A>(effect: Effect.Effect<A>) => Effect.suspend(() => (away ? Effect.die(new DatabaseAway()) : effect));
    const outage: DeliveryStorage = {
      claimDue: (...args) => whileAway(storage.claimDue(...args)),
      nextDueInMs: (...args) => whileAway(storage.nextDueInMs(...args)),
      recordAttempts: (...args) => whileAway(storage.recordAttempts(...args)),
    };
    const hook = receiver(clock, 500, () => 200);
    const failures: unknown[] = [];
    const dispatcher = new WebhookDispatcher(outage, settings, { failedLoop: (error) => failures.push(error) }, {
      time: clock.time, attempt: hook.attempt, isOutage: (error) => error instanceof DatabaseAway,
    });
    dispatcher.start();
    running.push(dispatcher);
    await advance(100);
    expect(hook.calls).toHaveLength(3);
    // The attempts end (and hand their results over) while the database is away.
    away = true;
    await advance(outageMs);
    away = false;
    await advance(settings.leaseMs + 2_000);
    expect(deliveries.map((delivery) => delivery.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    expect(hook.calls).toHaveLength(3 * sends);
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((error) => error instanceof DatabaseAway)).toBe(true);
  });

  it("claims in batches when an endpoint's cap, not its slots, holds it back", async () => {
    const { storage } = oneEndpointQueue("https://hooks.example/capped", 400);
    // Attempts of 150 to 220 ms, so they end one by one.
    const hook = receiver(clock, 150, () => 200);
    const jittered = (delivery: DueDelivery) =>
      new Promise<AttemptResult>((done) => clock.time.after((delivery.id % 8) * 10, () => void hook.attempt(delivery).then(done)));
    start(storage, jittered, { ...SETTINGS, concurrency: 64, endpointConcurrency: 8 });
    await advance(15_000, 20);
    expect(storage.deliveries.every((delivery) => delivery.status === "succeeded")).toBe(true);
    // A claim once 5 of the 8 in flight have ended, or after a thirty-second of an attempt's time:
    // 159 claims here, where counting free slots made one per attempt that ended (396).
    expect(storage.claims).toBeLessThan(400 / 2);
  });

  it("claims a freed slot again within the claim wait, not when the writer's batch is written", async () => {
    const { storage } = oneEndpointQueue("https://hooks.example/slow-receiver", 400);
    // A busy database: each batch of results takes 150 ms to write.
    const slowWrites: DeliveryStorage = {
      claimDue: storage.claimDue,
      nextDueInMs: storage.nextDueInMs,
      recordAttempts: (records, policy) =>
        Effect.promise(() => new Promise<void>((done) => clock.time.after(150, done))).pipe(Effect.andThen(storage.recordAttempts(records, policy))),
    };
    // A receiver answering in 400 to 492 ms, so attempts end one by one.
    const hook = receiver(clock, 400, () => 200);
    const staggered = (delivery: DueDelivery) =>
      new Promise<AttemptResult>((done) => clock.time.after((delivery.id % 24) * 4, () => void hook.attempt(delivery).then(done)));
    const dispatcher = start(slowWrites, staggered, { ...SETTINGS, concurrency: 24, endpointConcurrency: 24 });
    await advance(1_500, 10);
    const before = dispatcher.slotSeconds;
    await advance(4_000, 10);
    // Slot-seconds in use over the 4 s, of the 24 slots' 96 (0.90 when a freed slot waited for the writer's batch).
    expect((dispatcher.slotSeconds - before) / (4 * 24)).toBeGreaterThanOrEqual(0.95);
  });

  it("stops claiming at shutdown, lets the attempts in flight finish and writes their results", async () => {
    const { storage } = oneEndpointQueue("https://hooks.example/slow", 3);
    const hook = receiver(clock, 1_000, () => 200);
    const dispatcher = start(storage, hook.attempt, { ...SETTINGS, endpointConcurrency: 1 });
    await advance(500);
    expect(hook.calls).toHaveLength(1);
    running = [];
    let stopped = false;
    const stopping = dispatcher.stop().then(() => (stopped = true));
    await advance(400);
    expect(stopped).toBe(false);
    await advance(1_000);
    await stopping;
    expect(hook.calls).toHaveLength(1);
    expect(storage.deliveries.map((delivery) => delivery.status)).toEqual(["succeeded", "pending", "pending"]);
    expect(storage.attempts).toHaveLength(1);
  });
});

/** A loop state: a dispatcher of 12 slots, 12 in flight after its last claim (so `claimAt` 4), 20 ms of claim wait. */
const state = (change: Partial<ClaimState>): ClaimState => ({
  concurrency: 12, inFlight: 12, endedSinceClaim: 0, claimAt: 4, sinceClaimMs: 0, claimWaitMs: 20, newWork: false, pollIntervalMs: 1_000, ...change,
});

describe("claimTiming", () => {
  it.each<[string, Partial<ClaimState>, ClaimTiming]>([
    ["no slot free: wait for an attempt to end", { inFlight: 12, sinceClaimMs: 5_000 }, { kind: "wait", ms: 1_000 }],
    ["nothing in flight: at once", { inFlight: 0 }, { kind: "claim" }],
    ["claimAt attempts ended: at once", { inFlight: 8, endedSinceClaim: 4, sinceClaimMs: 1 }, { kind: "claim" }],
    ["fewer ended: the rest of the claim wait", { inFlight: 10, endedSinceClaim: 2, sinceClaimMs: 5 }, { kind: "wait", ms: 15 }],
    ["fewer ended, the claim wait passed: at once", { inFlight: 11, endedSinceClaim: 1, sinceClaimMs: 20 }, { kind: "claim" }],
    ["new deliveries and claimAt slots free: at once", { inFlight: 8, endedSinceClaim: 0, newWork: true, sinceClaimMs: 1 }, { kind: "claim" }],
    ["new deliveries, fewer slots free: the claim wait", { inFlight: 10, endedSinceClaim: 2, newWork: true, sinceClaimMs: 1 }, { kind: "wait", ms: 19 }],
  ])("%s", (_case, change, timing) => {
    expect(claimTiming(state(change))).toEqual(timing);
  });
});
