import { describe, expect, it } from "vitest";
import { poolOptions } from "../src/pool-options.ts";

/** What the pool is told: every wait bounded, and no startup parameter a transaction pooler refuses. */
describe("poolOptions", () => {
  const limits = { connectTimeoutMs: 2_000, statementTimeoutMs: 5_000 };
  it.each([
    ["PostgreSQL itself", limits, "none", { connectionTimeoutMillis: 2_000, statement_timeout: 5_000 }],
    ["with generic plans", { ...limits, genericPlans: true }, "none",
      { connectionTimeoutMillis: 2_000, statement_timeout: 5_000, options: "-c plan_cache_mode=force_generic_plan" }],
    ["a transaction pooler", { ...limits, genericPlans: true }, "transaction", { connectionTimeoutMillis: 2_000 }],
  ] as const)("%s", (_name, given, pooler, expected) => {
    expect(poolOptions(given, pooler)).toEqual(expected);
  });
});
