import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { describedThrottle, ENDPOINT_THROTTLE_MAX_PER_SECOND, parseEndpointThrottle } from "./endpoint-throttle.ts";

describe("parseEndpointThrottle", () => {
  it.each([
    ["5", 5], [" 1 ", 1], ["1000", ENDPOINT_THROTTLE_MAX_PER_SECOND], ["", null], ["none", null], [" None ", null],
  ])("reads %j as %j", (raw, expected) => {
    expect(Result.getOrThrow(parseEndpointThrottle(raw))).toBe(expected);
  });

  it.each(["0", "1001", "-3", "2.5", "1e3", "five", "0x10", "99999999"])("refuses %j, naming the range", (raw) => {
    const result = parseEndpointThrottle(raw);
    expect(Result.isFailure(result)).toBe(true);
    expect(result).toMatchObject({ failure: { _tag: "InvalidInput", message: expect.stringContaining("from 1 to 1000, or none") } });
  });
});

describe("describedThrottle", () => {
  it.each([[null, "none"], [1, "1 delivery per second"], [5, "5 deliveries per second"]] as const)("reads %j as %j", (perSecond, text) => {
    expect(describedThrottle(perSecond)).toBe(text);
  });
});
