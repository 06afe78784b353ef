import { Result } from "effect";
import { describe, expect, it } from "vitest";
import { parseDeliveryLogFilter, parseUtcTime } from "./delivery-log.ts";

/** The delivery log's filter as a query string gives it, and the times it takes. */

describe("parseUtcTime", () => {
  it.each([
    ["2026-11-24T10:05", "2026-11-24T10:05:00.000Z"],
    ["2026-11-24T10:05:30", "2026-11-24T10:05:30.000Z"],
    ["2026-11-24T10:05:30.5", "2026-11-24T10:05:30.500Z"],
    ["2026-11-24T10:05:30.125Z", "2026-11-24T10:05:30.125Z"],
    [" 2026-11-24T10:05 ", "2026-11-24T10:05:00.000Z"],
  ])("reads %s as %s", (text, iso) => {
    expect(parseUtcTime(text)).toBe(iso);
  });

  it.each([["yesterday"], ["2026-11-24"], ["2026-02-30T10:00"], ["2026-11-24T25:00"], ["2026-11-24T10:05+02:00"], [""]])("refuses %s", (text) => {
    expect(parseUtcTime(text)).toBeUndefined();
  });
});

describe("parseDeliveryLogFilter", () => {
  it("reads every field, the first of a repeated one, and empty ones as any", () => {
    expect(Result.getOrThrow(parseDeliveryLogFilter({
      status: ["failed", "pending"], type: "client.created", endpoint: "7", from: "2026-11-24T10:00", to: "2026-11-24T11:00",
    }))).toEqual({ status: "failed", eventType: "client.created", endpointId: 7, from: "2026-11-24T10:00:00.000Z", to: "2026-11-24T11:00:00.000Z" });
    expect(Result.getOrThrow(parseDeliveryLogFilter({ status: "", type: "", endpoint: "", from: "", to: "" }))).toEqual({});
    expect(Result.getOrThrow(parseDeliveryLogFilter({}))).toEqual({});
  });

  it.each([
    [{ status: "lost" }, "status must be pending, succeeded or failed"],
    [{ type: "client.deleted" }, "type must be one of the event types"],
    [{ endpoint: "0" }, "endpoint must be an endpoint id"],
    [{ endpoint: "x" }, "endpoint must be an endpoint id"],
    [{ from: "last week" }, "from must be a time written YYYY-MM-DDTHH:MM (UTC)"],
    [{ to: "2026-13-01T00:00" }, "to must be a time written YYYY-MM-DDTHH:MM (UTC)"],
    [{ from: "2026-11-24T11:00", to: "2026-11-24T11:00" }, "to must be after from"],
  ])("refuses %j: %s", (query, message) => {
    const result = parseDeliveryLogFilter(query);
    expect(Result.isFailure(result) && result.failure.message).toBe(message);
  });
});
