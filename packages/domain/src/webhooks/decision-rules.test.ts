import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluateRule, type Rule, withInputs } from "./decision-rules.ts";
import { BATCH_DISABLES, DELIVERY_DECISION, ENDPOINT_DECISION, NOTICE_CLIMBS, NOTICE_KINDS } from "./delivery-decision.ts";

/** The decision rules' own operations: fixing some inputs (`withInputs`) decides as the whole rule does with those inputs. */

const RULES: ReadonlyArray<readonly [string, Rule]> = [
  ...Object.entries<Rule>(DELIVERY_DECISION).map(([column, rule]) => [`delivery ${column}`, rule] as const),
  ...Object.entries<Rule>(ENDPOINT_DECISION).map(([column, rule]) => [`endpoint ${column}`, rule] as const),
  ["batch disables", BATCH_DISABLES],
  ["notice climbs", NOTICE_CLIMBS],
];

const NOW = 1_800_000_000_000;
const stage = fc.constantFrom(null, ...NOTICE_KINDS);
const inputs = fc.record({
  outcome: fc.constantFrom("succeeded", "failed", "gone", "unsendable"),
  retryDelayMs: fc.option(fc.nat(100_000), { nil: null }),
  endpointEnabled: fc.boolean(),
  anySuccess: fc.boolean(),
  gone: fc.boolean(),
  failures: fc.nat(5),
  consecutiveFailures: fc.nat(8),
  failingSince: fc.option(fc.integer({ min: NOW - 400_000, max: NOW }), { nil: null }),
  enabled: fc.boolean(),
  disabledReason: fc.constantFrom(null, "disabled by hand"),
  noticed: stage,
  noticedAfter: stage,
  threshold: fc.integer({ min: 1, max: 5 }),
  cooldownMs: fc.nat(60_000),
  windowMs: fc.nat(300_000),
  noticeMs: fc.nat(300_000),
});

describe("withInputs", () => {
  it("decides, for any inputs and any of them fixed, what the whole rule decides", () => {
    fc.assert(fc.property(inputs, (given) => {
      const names = Object.keys(given) as Array<keyof typeof given>;
      for (const fixed of [names.filter((_, i) => i % 2 === 0), names.filter((_, i) => i % 3 === 0), ["endpointEnabled" as const]]) {
        const known = Object.fromEntries(fixed.map((name) => [name, given[name]]));
        for (const [name, rule] of RULES) {
          expect(evaluateRule(withInputs(rule, known), given, NOW), name).toEqual(evaluateRule(rule, given, NOW));
        }
      }
    }));
  });

  it("folds what the fixed inputs decide away", () => {
    expect(withInputs(DELIVERY_DECISION.settledReason, { endpointEnabled: true })).toEqual({ op: "value", value: null });
  });
});
