import {
  BATCH_DISABLES, DELIVERY_DECISION, ENDED_BY_DELETED_ENDPOINT, ENDED_BY_DISABLED_ENDPOINT, ENDPOINT_DECISION, evaluateRule, NOTICE_CLIMBS, NOTICE_KINDS, type Rule, type RuleValue,
} from "@platter/domain";
import fc from "fast-check";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@platter/testing";
import { ruleSql } from "../src/webhooks/decision-sql.ts";

/**
 * The record statement is generated from the domain's decision rules (`decision-sql.ts`): for any
 * inputs, every rule the statement applies yields in PostgreSQL what the domain's evaluation yields
 * (null as SQL has it, times on the one clock). The statement as a whole is checked against the
 * domain's functions by `delivery-decision.test.ts`.
 */

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase(inject("pgAdminUrl"));
  client = await db.rawClient();
});
afterAll(() => db?.dispose());

/** Every rule the record statement (and the deletion's ending of deliveries) applies, by name. */
const RULES: ReadonlyArray<readonly [string, Rule]> = [
  ...Object.entries<Rule>(DELIVERY_DECISION).map(([column, rule]) => [`delivery ${column}`, rule] as const),
  ...Object.entries<Rule>(ENDED_BY_DISABLED_ENDPOINT).map(([column, rule]) => [`ended ${column}`, rule] as const),
  ...Object.entries<Rule>(ENDED_BY_DELETED_ENDPOINT).map(([column, rule]) => [`ended by deletion ${column}`, rule] as const),
  ...Object.entries<Rule>(ENDPOINT_DECISION).map(([column, rule]) => [`endpoint ${column}`, rule] as const),
  ["batch disables", BATCH_DISABLES],
  ["notice climbs", NOTICE_CLIMBS],
];

/** Each input's SQL type (`failingSince` is a time: milliseconds in the domain, a timestamp in SQL). */
const TYPES: Readonly<Record<string, string>> = {
  outcome: "text", retryDelayMs: "bigint", endpointEnabled: "boolean",
  anySuccess: "boolean", gone: "boolean", failures: "int", consecutiveFailures: "int", failingSince: "time", enabled: "boolean",
  disabledReason: "text", noticed: "text", noticedAfter: "text", threshold: "int", cooldownMs: "bigint", windowMs: "bigint", noticeMs: "bigint",
};

const stage = fc.constantFrom(null, ...NOTICE_KINDS);
const inputs = fc.record({
  outcome: fc.constantFrom("succeeded", "failed", "gone", "unsendable"),
  retryDelayMs: fc.option(fc.nat(100_000), { nil: null }),
  endpointEnabled: fc.boolean(),
  anySuccess: fc.boolean(),
  gone: fc.boolean(),
  failures: fc.nat(5),
  consecutiveFailures: fc.nat(8),
  failingSinceAgoMs: fc.option(fc.nat(400_000), { nil: null }),
  enabled: fc.boolean(),
  disabledReason: fc.constantFrom(null, "disabled by hand", "it's 'quoted'"),
  noticed: stage,
  noticedAfter: stage,
  threshold: fc.integer({ min: 1, max: 5 }),
  cooldownMs: fc.nat(60_000),
  windowMs: fc.nat(300_000),
  noticeMs: fc.nat(300_000),
});

/** A value PostgreSQL returned, as the domain has it: a time in milliseconds, a bigint as a number. */
const asDomain = (value: unknown): RuleValue =>
  value instanceof Date ? value.getTime() : typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : (value as RuleValue);

describe("the decision rules in SQL", () => {
  it("yield in PostgreSQL, for any inputs, what the domain's evaluation of each rule yields", async () => {
    await fc.assert(fc.asyncProperty(inputs, async ({ failingSinceAgoMs, ...given }) => {
      await client.query("begin");
      try {
        const [{ now_ms: nowMs }] = (await client.query("select (extract(epoch from now()) * 1000)::float8 as now_ms")).rows;
        const values: Record<string, RuleValue> = { ...given, failingSince: failingSinceAgoMs === null ? null : nowMs - failingSinceAgoMs };
        const names = Object.keys(TYPES);
        const bindings = Object.fromEntries(names.map((name, i) =>
          [name, TYPES[name] === "time" ? `to_timestamp($${i + 1}::float8 / 1000)` : `$${i + 1}::${TYPES[name]}`]));
        const [row] = (await client.query(
          `select ${names.map((name) => `${bindings[name]} as "in ${name}"`).join(", ")},
            ${RULES.map(([name, rule]) => `${ruleSql(rule, bindings)} as "${name}"`).join(",\n            ")}`,
          names.map((name) => values[name]),
        )).rows;
        for (const [name, rule] of RULES) {
          const expected = evaluateRule(rule, values, nowMs);
          const actual = asDomain(row[name]);
          const same = typeof expected === "number" && typeof actual === "number" ? Math.abs(actual - expected) <= 1 : actual === expected;
          expect(same, `${name}: SQL ${String(actual)}, domain ${String(expected)}`).toBe(true);
        }
      } finally {
        await client.query("rollback");
      }
    }), { numRuns: 300 });
  });
});
