import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AttemptOutcome } from "./delivery.ts";
import {
  DISABLED_FAILING, DISABLED_GONE, deliveryAfterAttempt, deliveryDecided, deliveryToEndpoint, type EndpointHealth, endpointAfterAttempts, endpointSwitched,
  NOTICE_KINDS, noticeWritten, SETTLED_ENDPOINT_DISABLED,
} from "./delivery-decision.ts";

/** The decisions after attempts, by example and by property (the SQL that applies them is checked against them in persistence). */

const NOW = 1_800_000_000_000;
const SCHEDULE = [0, 5_000, 300_000];
const POLICY = { circuitThreshold: 3, circuitCooldownMs: 30_000, failureWindowMs: 3_600_000, disableNoticeMs: 600_000 };
const HEALTHY: EndpointHealth = {
  consecutiveFailures: 0, failingSinceMs: undefined, circuitOpenUntilMs: undefined, enabled: true, disabledReason: null, noticed: null,
};

describe("deliveryAfterAttempt", () => {
  it.each([
    ["a success is done", 1, "succeeded", { status: "succeeded", nextAttemptAtMs: undefined, completedAtMs: NOW }],
    ["a first failure waits the schedule's second delay", 1, "failed", { status: "pending", nextAttemptAtMs: NOW + 5_000, completedAtMs: undefined }],
    ["a second failure waits the third", 2, "failed", { status: "pending", nextAttemptAtMs: NOW + 300_000, completedAtMs: undefined }],
    ["a failure past the schedule fails for good", 3, "failed", { status: "failed", nextAttemptAtMs: undefined, completedAtMs: NOW }],
    ["a 410 fails for good at once", 1, "gone", { status: "failed", nextAttemptAtMs: undefined, completedAtMs: NOW }],
    ["a message that cannot be sent fails for good at once", 1, "unsendable", { status: "failed", nextAttemptAtMs: undefined, completedAtMs: NOW }],
  ] as const)("%s", (_name, attempt, outcome, next) => {
    expect(deliveryAfterAttempt(attempt, outcome, SCHEDULE, NOW)).toEqual(next);
  });
});

describe("endpointAfterAttempts", () => {
  it("counts failures in a row and opens the circuit at the threshold, from now", () => {
    const once = endpointAfterAttempts(HEALTHY, ["failed", "failed"], POLICY, NOW);
    expect(once).toEqual({ ...HEALTHY, consecutiveFailures: 2, failingSinceMs: NOW });
    const twice = endpointAfterAttempts(once, ["failed"], POLICY, NOW + 10);
    expect(twice).toEqual({ ...once, consecutiveFailures: 3, circuitOpenUntilMs: NOW + 10 + 30_000, noticed: "failing" });
  });

  it("closes the circuit and clears the failures on any success in the batch", () => {
    const open = { ...HEALTHY, consecutiveFailures: 7, failingSinceMs: NOW - 60_000, circuitOpenUntilMs: NOW - 1, noticed: "failing" as const };
    expect(endpointAfterAttempts(open, ["failed", "succeeded", "failed"], POLICY, NOW)).toEqual(HEALTHY);
  });

  it("disables on a 410, even beside a success", () => {
    expect(endpointAfterAttempts(HEALTHY, ["succeeded", "gone"], POLICY, NOW)).toEqual({ ...HEALTHY, enabled: false, disabledReason: DISABLED_GONE, noticed: "disabled" });
  });

  it("disables an endpoint failing for longer than the window, and keeps the reason of one disabled before", () => {
    const failing = { ...HEALTHY, consecutiveFailures: 40, failingSinceMs: NOW - POLICY.failureWindowMs - 1 };
    expect(endpointAfterAttempts(failing, ["failed"], POLICY, NOW)).toMatchObject({ enabled: false, disabledReason: DISABLED_FAILING, noticed: "disabled" });
    const byHand = { ...failing, enabled: false, disabledReason: "disabled by hand in the Developer area" };
    expect(endpointAfterAttempts(byHand, ["gone"], POLICY, NOW)).toMatchObject({ enabled: false, disabledReason: "disabled by hand in the Developer area" });
  });

  const outcome = fc.constantFrom<AttemptOutcome>("succeeded", "failed", "gone", "unsendable");
  const health = fc.record({
    consecutiveFailures: fc.nat(20),
    failingSinceMs: fc.option(fc.integer({ min: NOW - 10_000_000, max: NOW }), { nil: undefined }),
    circuitOpenUntilMs: fc.option(fc.integer({ min: NOW - 100_000, max: NOW + 100_000 }), { nil: undefined }),
    enabled: fc.boolean(),
    disabledReason: fc.constantFrom(null, "disabled by hand in the Developer area"),
    noticed: fc.constantFrom(null, ...NOTICE_KINDS),
  });

  it("is untouched by messages that were never sent, and its results count the same in any order", () => {
    fc.assert(fc.property(health, fc.array(outcome, { maxLength: 6 }), (before, outcomes) => {
      const sent = outcomes.filter((o) => o !== "unsendable");
      expect(endpointAfterAttempts(before, outcomes, POLICY, NOW)).toEqual(
        sent.length === 0 ? before : endpointAfterAttempts(before, sent, POLICY, NOW),
      );
      expect(endpointAfterAttempts(before, [...outcomes].reverse(), POLICY, NOW)).toEqual(endpointAfterAttempts(before, outcomes, POLICY, NOW));
    }));
  });

  it("never enables an endpoint, and never changes a disabled one's reason", () => {
    fc.assert(fc.property(health, fc.array(outcome, { maxLength: 6 }), (before, outcomes) => {
      const after = endpointAfterAttempts(before, outcomes, POLICY, NOW);
      expect(after).toMatchObject(before.enabled ? {} : { enabled: false, disabledReason: before.disabledReason });
    }));
  });

  it("notices each transition once: the circuit opening, the window's last notice period, the disabling; a success starts over", () => {
    const failing = endpointAfterAttempts(HEALTHY, ["failed", "failed", "failed"], POLICY, NOW);
    expect([noticeWritten(HEALTHY, failing), failing.noticed]).toEqual(["failing", "failing"]);
    // More failures, circuit still open: nothing new.
    const more = endpointAfterAttempts(failing, ["failed", "failed"], POLICY, NOW + 1_000);
    expect(noticeWritten(failing, more)).toBeUndefined();
    const soon = endpointAfterAttempts(more, ["failed"], POLICY, NOW + POLICY.failureWindowMs - POLICY.disableNoticeMs);
    expect(noticeWritten(more, soon)).toBe("disabling_soon");
    expect(noticeWritten(soon, endpointAfterAttempts(soon, ["failed"], POLICY, NOW + POLICY.failureWindowMs - 1))).toBeUndefined();
    const disabled = endpointAfterAttempts(soon, ["failed"], POLICY, NOW + POLICY.failureWindowMs + 1);
    expect([noticeWritten(soon, disabled), disabled.enabled]).toEqual(["disabled", false]);
    const recovered = endpointAfterAttempts(more, ["succeeded"], POLICY, NOW + 2_000);
    expect(recovered.noticed).toBeNull();
    expect(noticeWritten(recovered, endpointAfterAttempts(recovered, ["failed", "failed", "failed"], POLICY, NOW + 3_000))).toBe("failing");
  });

  it("writes a notice only when its endpoint was enabled, only a later one than before, and at most one per batch", () => {
    let counted = { noticed: 0, quiet: 0 };
    fc.assert(fc.property(health, fc.array(outcome, { maxLength: 6 }), (before, outcomes) => {
      const after = endpointAfterAttempts(before, outcomes, POLICY, NOW);
      const notice = noticeWritten(before, after);
      if (notice === undefined) counted = { ...counted, quiet: counted.quiet + 1 };
      else counted = { ...counted, noticed: counted.noticed + 1 };
      expect(notice === undefined || (before.enabled && NOTICE_KINDS.indexOf(notice) > NOTICE_KINDS.indexOf(before.noticed ?? ("none" as never)))).toBe(true);
    }));
    expect(counted.noticed).toBeGreaterThan(0);
    expect(counted.quiet).toBeGreaterThan(0);
  });
});

describe("deliveryToEndpoint", () => {
  it.each([
    ["a retry to an enabled endpoint stays pending", 1, "failed", true, { status: "pending", nextAttemptAtMs: NOW + 5_000, completedAtMs: undefined, settledReason: undefined }],
    ["a retry to a disabled endpoint ends, failed now", 1, "failed", false, { status: "failed", nextAttemptAtMs: undefined, completedAtMs: NOW, settledReason: SETTLED_ENDPOINT_DISABLED }],
    ["a success to a disabled endpoint is a success", 1, "succeeded", false, { status: "succeeded", nextAttemptAtMs: undefined, completedAtMs: NOW, settledReason: undefined }],
    ["a failure for good to a disabled endpoint keeps its own end", 3, "failed", false, { status: "failed", nextAttemptAtMs: undefined, completedAtMs: NOW, settledReason: undefined }],
  ] as const)("%s", (_name, attempt, outcome, enabled, next) => {
    expect(deliveryToEndpoint(deliveryAfterAttempt(attempt, outcome, SCHEDULE, NOW), enabled, NOW)).toEqual(next);
    // The one table decides both at once, as the record statement applies it.
    expect(deliveryDecided(attempt, outcome, SCHEDULE, enabled, NOW)).toEqual(next);
  });

  it("is the table's composition for any attempt, outcome and endpoint", () => {
    fc.assert(fc.property(fc.nat(4), fc.constantFrom<AttemptOutcome>("succeeded", "failed", "gone", "unsendable"), fc.boolean(), (attempt, outcome, enabled) => {
      expect(deliveryDecided(attempt, outcome, SCHEDULE, enabled, NOW))
        .toEqual(deliveryToEndpoint(deliveryAfterAttempt(attempt, outcome, SCHEDULE, NOW), enabled, NOW));
    }));
  });
});

describe("endpointSwitched", () => {
  it("starts the run over: one failure after enabling a failing endpoint is not failing, and the next notice needs a whole new run", () => {
    let failing = HEALTHY;
    for (let i = 0; i < 5; i++) failing = endpointAfterAttempts(failing, ["failed"], POLICY, NOW + i);
    expect(failing).toMatchObject({ consecutiveFailures: 5, noticed: "failing" });
    let notices = 0;
    let health = failing;
    for (let cycle = 0; cycle < 10; cycle++) {
      const enabled = endpointSwitched(true, "unused");
      health = endpointAfterAttempts(endpointSwitched(false, "disabled by hand"), [], POLICY, NOW);
      expect(health).toMatchObject({ enabled: false, disabledReason: "disabled by hand", noticed: null, consecutiveFailures: 0 });
      const after = endpointAfterAttempts(enabled, ["failed"], POLICY, NOW + cycle);
      notices += noticeWritten(enabled, after) === undefined ? 0 : 1;
      health = after;
    }
    expect(notices).toBe(0);
    expect(health).toEqual({ ...HEALTHY, consecutiveFailures: 1, failingSinceMs: NOW + 9 });
  });
});
